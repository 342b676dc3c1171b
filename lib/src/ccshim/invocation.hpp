#pragma once
// cc-shim's command line read once (ccache's process_args shape): the response files expanded and every
// argument read against gcc's option table into one Invocation, which every later step takes (the query
// answers, the translation, the driver's warnings, the libc file, the plan's refusals) instead of walking
// argv again.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "context.hpp"
#include "options.hpp"

namespace provkit::ccshim {

// One argument as gcc's option table reads it, with the value beside it when it is the next argv entry.
struct Argument {
  const GccOption* option = nullptr;  // nullptr: an input, or an option passed on without being known
  std::string given;                  // the argument as written
  std::string value;                  // the option's value (joined, prefixed or the next argument)
  bool value_separate = false;        // the value is the next argv entry (`-o FILE`), which is part of this one
  std::size_t index = 0;              // where `given` stands in Invocation::args
  bool is(std::string_view name) const { return option && option->name == name; }
};

// Where gcc stops (its driver's order: -E and -M stop before -fsyntax-only, which stops before -S, -c).
enum class Mode {
  link,         // none of the below: the inputs are compiled and linked
  compile,      // -c
  assemble,     // -S: assembler source out
  syntax_only,  // -fsyntax-only
  preprocess,   // -E, -M, -MM
};

// An input file (or `-` for stdin) with the -x language in force where it stands ("" or "none": by suffix).
struct Input {
  std::string path;
  std::string language;
};

struct Invocation {
  std::vector<std::string> args;    // the command line with its response files expanded
  std::vector<Argument> arguments;  // args read, an option and its separate value as one

  Mode mode = Mode::link;
  std::vector<Input> inputs;
  std::vector<fs::path> l_dirs;  // -L, in order: they apply to every -l, wherever it stands
  // The last -o and -MF (gcc takes the last), with the index in `args` of the argument holding the value.
  std::optional<std::pair<std::size_t, std::string>> output, dependency_file;

  // Self-queries gcc answers without compiling.
  bool asks_dumpmachine = false, asks_multiarch = false;
  bool asks_linker_version = false;  // -Wl,--version or -Xlinker --version (meson's linker detection)

  bool names_target = false;         // -target, --target=: the caller cross-compiles
  bool m32 = false;                  // -m32 anywhere
  bool names_cpu = false;            // -march=, -mcpu=
  bool sanitizes = false;            // -fsanitize=...
  bool static_link = false;          // -static
  bool no_std_includes = false;      // -nostdinc, --sysroot, -isysroot: the system headers are not gcc's
  bool warnings_are_errors = false;  // -Werror
  bool chooses_pic = false;          // -f[no-]pic/PIC/pie/PIE: the caller chose the code model
  bool chooses_fp = false;           // -ffast-math, -Ofast, -f[no-]trapping-math, ...: the caller chose FP semantics
  bool no_pie_link = false;          // -shared, -r, -static, -static-pie, -no-pie, -pie: not gcc's default PIE link
  std::vector<std::string> rtti;     // -frtti, -fno-rtti as given, in order (C++-only: cc1 warns for C)

  bool links() const { return mode == Mode::link; }
};

// `args` (already expanded) read into an Invocation. Pure: no file is opened.
Invocation read_invocation(std::vector<std::string> args);

// The command line as the shim gets it: its response files expanded (ctx.read_response_file, each read once)
// and read. Throws provkit::Error (ResponseFileRefusal) as expand_response_files does.
Invocation parse_invocation(const std::vector<std::string>& args, const SearchContext& ctx);

}  // namespace provkit::ccshim
