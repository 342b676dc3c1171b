#include "options.hpp"

#include <algorithm>
#include <array>

namespace provkit::ccshim {

namespace {

using namespace shape;

// Every option the shim must know: those it changes, and those whose value
// must never be read as an option of its own (`-o -march=x`, `-D -u`).
constexpr std::array<GccOption, 74> gcc_option_table = {{
    {"-o", separate, Rule::pass},
    {"-x", separate, Rule::pass},
    {"-I", separate | joined, Rule::pass},
    {"-D", separate | joined, Rule::pass},
    {"-U", separate | joined, Rule::pass},
    {"-include", separate, Rule::pass},
    {"-imacros", separate, Rule::pass},
    {"-isystem", separate, Rule::pass},
    {"-idirafter", separate, Rule::pass},
    {"-iquote", separate, Rule::pass},
    {"-isysroot", separate, Rule::pass},
    {"--sysroot", separate, Rule::pass},
    {"--sysroot=", prefix, Rule::pass},
    {"-MF", separate, Rule::pass},
    {"-MT", separate, Rule::pass},
    {"-MQ", separate, Rule::pass},
    {"-Xassembler", separate, Rule::pass},
    {"-Xpreprocessor", separate, Rule::pass},
    {"-Xclang", separate, Rule::pass},
    {"-z", separate, Rule::pass},
    {"-e", separate, Rule::pass},
    {"-T", separate, Rule::pass},
    {"-aux-info", separate, Rule::pass},
    {"-arch", separate, Rule::pass},
    {"--param", separate, Rule::pass},
    {"-target", separate, Rule::target},
    {"--target=", prefix, Rule::target},
    {"-Xlinker", separate, Rule::linker_arg},
    {"-Wl,", prefix, Rule::linker},
    {"-Wp,", prefix, Rule::preprocessor},
    {"-L", separate | joined, Rule::library_dir},
    {"-l", separate | joined, Rule::library},
    {"-u", separate, Rule::undefined_symbol},  // the joined -uSYM is read right by zig
    {"-march=", prefix, Rule::cpu},
    {"-mcpu=", prefix, Rule::cpu},
    {"-mtune=", prefix, Rule::tune},
    // gcc-only code generation and debug-info tuning clang stops at ("Unknown
    // Clang option"), and runtime choices zig makes itself (its compiler_rt,
    // static libc++, lld), which clang reports as unused.
    {"-fno-gnu-unique", flag, Rule::drop},
    {"-fvar-tracking", flag, Rule::drop},
    {"-fno-var-tracking", flag, Rule::drop},
    {"-fvar-tracking-assignments", flag, Rule::drop},
    {"-fno-var-tracking-assignments", flag, Rule::drop},
    {"-fipa-pta", flag, Rule::drop},
    {"-fno-ipa-pta", flag, Rule::drop},
    {"-flto-partition=", prefix, Rule::drop},
    {"-static-libgcc", flag, Rule::drop},
    {"-shared-libgcc", flag, Rule::drop},
    {"-static-libstdc++", flag, Rule::drop},
    {"-fuse-ld=", prefix, Rule::drop},
    // Facts about the whole command line (read in a first pass); passed on.
    {"-fsanitize=", prefix, Rule::pass},
    {"-static", flag, Rule::pass},
    {"-nostdinc", flag, Rule::pass},
    {"-m32", flag, Rule::pass},
    {"-m64", flag, Rule::pass},
    {"-dumpmachine", flag, Rule::pass},
    {"-print-multiarch", flag, Rule::pass},
    // What the command makes (gcc's specs: a PIE unless one of these says otherwise).
    {"-c", flag, Rule::pass},
    {"-S", flag, Rule::pass},
    {"-E", flag, Rule::pass},
    {"-M", flag, Rule::pass},
    {"-MM", flag, Rule::pass},
    {"-fsyntax-only", flag, Rule::pass},
    {"-shared", flag, Rule::pass},
    {"-r", flag, Rule::pass},
    {"-no-pie", flag, Rule::pass},
    {"-static-pie", flag, Rule::pass},
    {"-fPIC", flag, Rule::pass},
    {"-fpic", flag, Rule::pass},
    {"-fPIE", flag, Rule::pass},
    {"-fpie", flag, Rule::pass},
    {"-fno-PIC", flag, Rule::pass},
    {"-fno-pic", flag, Rule::pass},
    {"-fno-PIE", flag, Rule::pass},
    {"-fno-pie", flag, Rule::pass},
    {"-pie", flag, Rule::pass},
}};

// Dropped ones: diagnostics, link speed, layout, or what lld does anyway
// (docs/cc-shim.md). Those taking a value are listed so that their value is
// never read as an option, and `-Wl,-rpath DIR` (the value as gcc's next
// argument) is paired as ld pairs it.
constexpr std::array<LinkerOption, 46> linker_option_table = {{
    {"-rpath", true, false, false},
    {"-R", true, false, false},
    {"-soname", true, false, false},
    {"-h", true, false, false},
    {"-e", true, false, false},
    {"--entry", true, false, false},
    {"-u", true, false, false},
    {"--undefined", true, false, false},
    {"-T", true, false, false},
    {"--script", true, false, false},
    {"-Map", true, false, false},
    {"--version-script", true, false, false},
    {"-o", true, false, false},
    {"--output", true, false, false},
    {"-L", true, false, false},
    {"-l", true, false, false},
    {"--library", true, false, false},
    {"--library-path", true, false, false},
    {"--dynamic-linker", true, false, false},
    {"-I", true, false, false},
    {"-y", true, false, false},
    {"--trace-symbol", true, false, false},
    {"--defsym", true, false, false},
    {"--wrap", true, false, false},
    {"--exclude-libs", true, false, false},
    {"--dynamic-list", true, false, false},
    {"-m", true, false, false},
    {"--hash-style", true, false, false},
    {"--rpath-link", true, true, false},
    {"-rpath-link", true, true, false},
    {"-stats", false, true, false},
    {"--stats", false, true, false},
    {"--no-undefined-version", false, true, false},
    {"--fatal-warnings", false, true, false},
    {"--warn-common", false, true, false},
    {"--enable-new-dtags", false, true, false},
    {"-Bsymbolic-functions", false, true, false},
    {"--no-add-needed", false, true, false},
    {"--no-copy-dt-needed-entries", false, true, false},
    {"--threads", false, true, true},
    {"--no-threads", false, true, true},
    {"-plugin-opt", false, true, true},
    {"--plugin-opt", false, true, true},
    {"--icf=", false, true, true},
    {"-rpath-link=", false, true, true},
    {"--rpath-link=", false, true, true},
}};

// One row per clang 16 warning that gcc 12 does not give under the same
// flags (warnings_mirror_gcc); docs/cc-shim.md, "warnings", lists them.
constexpr std::array<QuietWarning, 17> quiet_warning_table = {{
    {"pointer-sign", {"-Wall", "-Wpedantic", "-pedantic", "-pedantic-errors"}},  // Triton's launcher stub
    {"parentheses", {"-Wall"}},
    {"format", {"-Wall", "-Wformat=1", "-Wformat=2"}},
    {"unused-comparison", {"-Wall", "-Wunused-value", "-Wunused"}},  // gcc's -Wunused-value
    {"parentheses-equality", {}},
    {"string-plus-int", {}},
    {"unused-command-line-argument", {}},  // e.g. -L or -Wl, flags on a -c compile
    {"unknown-warning-option", {}},        // gcc-only -Wno-stringop-overflow and the like
    // K&R definitions and `int f();` (zlib: 324 of them); gcc 12 has no such warning.
    {"deprecated-non-prototype", {}},
    // gcc's -Wstrict-prototypes allows a `()` definition after a prototype;
    // clang's does not (json-c's -Werror build stops on it).
    {"strict-prototypes", {}, false},
    // `#define X defined(Y)` used in #if: gcc warns under -Wextra or -pedantic.
    {"expansion-to-defined", {"-Wextra", "-W", "-Wpedantic", "-pedantic"}},
    // clang's -Wall path analysis; gcc's -Wmaybe-uninitialized is another one.
    {"sometimes-uninitialized", {}},
    {"self-assign", {}},                                                                 // clang's -Wall: `x = x;`
    {"single-bit-bitfield-constant-conversion", {}},                                     // clang 16, by default
    {"compound-token-split-by-macro", {}},                                               // clang, by default
    {"tautological-constant-out-of-range-compare", {"-Wextra", "-W", "-Wtype-limits"}},  // gcc's -Wtype-limits
    // fabs() of a __float128 or an integer (pixman's matrix-test): clang by default, gcc under -Wextra.
    {"absolute-value", {"-Wextra", "-W"}},
}};

// Errors in clang 16 that gcc 12 gives as warnings; `-Wno-error=<name>`
// goes first (so a caller's own -Werror=<name> wins), unless -Werror is given.
constexpr std::array<std::string_view, 4> warnings_not_errors_table = {"implicit-function-declaration", "implicit-int",
                                                                       "int-conversion",
                                                                       "incompatible-function-pointer-types"};

}  // namespace

std::span<const GccOption> gcc_options() { return gcc_option_table; }
std::span<const QuietWarning> quiet_warnings() { return quiet_warning_table; }
std::span<const std::string_view> warnings_not_errors() { return warnings_not_errors_table; }

ParsedArg parse_one(const std::vector<std::string>& args, std::size_t i) {
  const auto& a = args[i];
  for (const auto& opt : gcc_option_table) {
    if ((opt.shape & prefix) && a.starts_with(opt.name)) return {&opt, a.substr(opt.name.size()), false};
    if (a == opt.name) {
      if ((opt.shape & separate) && i + 1 < args.size()) return {&opt, args[i + 1], true};
      return {&opt, "", false};
    }
    if ((opt.shape & joined) && a.size() > opt.name.size() && a.starts_with(opt.name))
      return {&opt, a.substr(opt.name.size()), false};
  }
  return {};
}

bool is_option(const ParsedArg& p, std::string_view name) { return p.option && p.option->name == name; }

std::optional<std::pair<std::size_t, std::string>> last_option_value(const std::vector<std::string>& args,
                                                                     std::string_view option) {
  std::optional<std::pair<std::size_t, std::string>> found;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    if (is_option(p, option) && p.value_separate) found = {{i + 1, p.value}};
    if (!p.option && args[i].size() > option.size() && args[i].starts_with(option))
      found = {{i, args[i].substr(option.size())}};
    if (p.value_separate) ++i;
  }
  return found;
}

// A C/C++/assembler source gcc would compile (so it is not a linker operand).
bool is_source_file(std::string_view a) {
  static constexpr std::array<std::string_view, 14> suffixes = {".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".cp",
                                                                ".i", ".ii", ".m",   ".mm",  ".s",   ".S", ".sx"};
  auto dot = a.rfind('.');
  if (dot == std::string_view::npos) return false;
  return std::find(suffixes.begin(), suffixes.end(), a.substr(dot)) != suffixes.end();
}

const LinkerOption* find_linker_option(std::string_view t) {
  for (const auto& opt : linker_option_table)
    if (opt.prefix ? t.starts_with(opt.name) : t == opt.name) return &opt;
  return nullptr;
}

bool is_droppable_z_keyword(std::string_view k) {
  static constexpr std::array<std::string_view, 5> keywords = {"separate-code", "noseparate-code", "combreloc",
                                                               "pack-relative-relocs", "nopack-relative-relocs"};
  return std::find(keywords.begin(), keywords.end(), k) != keywords.end();
}

bool asks_for(const std::vector<std::string>& args, const QuietWarning& w) {
  const std::string flag = "-W" + std::string(w.name), as_error = "-Werror=" + std::string(w.name);
  for (const auto& a : args) {
    if (w.name_asks && (a == flag || a == as_error)) return true;
    for (auto e : w.enabled_by)
      if (!e.empty() && a == e) return true;
  }
  return false;
}

}  // namespace provkit::ccshim
