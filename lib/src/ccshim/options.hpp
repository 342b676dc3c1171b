#pragma once
// cc-shim's knowledge of the options it reads: gcc's
// driver options, GNU ld's options as they reach it through -Wl, and
// -Xlinker, and the warnings where gcc's defaults differ from clang's. One
// table each, shaped like ccache's compopt; the translation (ccshim_translate)
// only asks them.
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace provkit::ccshim {

// What the translation does with a gcc driver option (docs/cc-shim.md).
enum class Rule {
  pass,              // copied, with its value, never translated
  drop,              // gcc-only and without effect under zig
  library_dir,       // -L
  library,           // -l NAME, -l:NAME
  undefined_symbol,  // -u SYM: zig would read SYM as an input file
  cpu,               // -march=, -mcpu=: zig's CPU spelling
  tune,              // -mtune=: dropped
  linker,            // -Wl,a,b
  linker_arg,        // -Xlinker a
  preprocessor,      // -Wp,a,b
  target,            // -target T, --target=T: the caller cross-compiles
};

// How an option and its value are spelled (bits of GccOption::shape).
namespace shape {
enum : unsigned {
  flag = 0,      // exactly the name
  separate = 1,  // the name, then the value as the next argument
  joined = 2,    // the value glued to the name (-Ldir); with `separate`, either
  prefix = 4,    // any argument starting with the name (-march=...)
};
}  // namespace shape

struct GccOption {
  std::string_view name;
  unsigned shape;
  Rule rule;
};

// Every option the shim must know: those it changes, and those whose value
// must never be read as an option of its own (`-o -march=x`, `-D -u`).
std::span<const GccOption> gcc_options();

// One argument as the table reads it: the option (nullptr for an input file
// or an option the shim passes on without knowing it), its value, and
// whether the value is the next argv entry.
struct ParsedArg {
  const GccOption* option = nullptr;
  std::string value;
  bool value_separate = false;
};

// args[i] read against gcc_options().
ParsedArg parse_one(const std::vector<std::string>& args, std::size_t i);

// True when `p` is the table's option `name`.
bool is_option(const ParsedArg& p, std::string_view name);

// The value of the last `option` of a command line (an option with a value: -o, -MF; gcc takes the last
// one), spelt apart (`-o FILE`) or joined (`-oFILE`), with the index in `args` of the argument that holds
// it; nullopt when there is none.
std::optional<std::pair<std::size_t, std::string>> last_option_value(const std::vector<std::string>& args,
                                                                     std::string_view option);

// A C/C++/assembler source gcc would compile (so it is not a linker operand).
bool is_source_file(std::string_view a);

// ---- GNU ld's options, as they reach it through -Wl, and -Xlinker ----

struct LinkerOption {
  std::string_view name;
  bool takes_value;  // the next linker argument is its value
  bool drop;         // zig's -Wl parser rejects it and leaving it out changes nothing in the output
  bool prefix;       // matches any argument starting with the name
};

// The table's entry for one linker argument; nullptr when it has none.
const LinkerOption* find_linker_option(std::string_view t);

// `-z KEYWORD`s dropped for the same reason as LinkerOption::drop.
bool is_droppable_z_keyword(std::string_view k);

// ---- warnings: gcc's defaults, not clang's ----

// The gcc whose diagnostics the warning tables mirror, against zig 0.11's clang.
inline constexpr std::string_view warnings_mirror_gcc = "12.2 (Debian 12), against clang 16 (zig 0.11)";

// A diagnostic clang gives (by default, or under -Wall/-Wextra) that gcc 12
// gives only when asked, or never. Unless the command line asks for it in
// gcc's terms (an enabler, or -W<name> / -Werror=<name> when gcc has a
// warning of that name and meaning), `-Wno-<name>` goes after the caller's
// arguments, where no -Wall can turn it back on.
struct QuietWarning {
  std::string_view name;
  std::array<std::string_view, 4> enabled_by;  // gcc options that turn it on; empty: none (clang-only)
  // False when gcc's -W<name> means less than clang's (clang 16's
  // -Wstrict-prototypes also flags `f() {}` after an `f(void)` prototype,
  // which gcc allows): then even -W<name> leaves it off.
  bool name_asks = true;
};
std::span<const QuietWarning> quiet_warnings();

// Errors in clang 16 that gcc 12 gives as warnings; `-Wno-error=<name>`
// goes first (so a caller's own -Werror=<name> wins), unless -Werror is given.
std::span<const std::string_view> warnings_not_errors();

// True when the command line asks for warning `w` in gcc's terms.
bool asks_for(const std::vector<std::string>& args, const QuietWarning& w);

}  // namespace provkit::ccshim
