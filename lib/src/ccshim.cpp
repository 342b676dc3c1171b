#include "provkit/ccshim.hpp"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string_view>
#include <sys/stat.h>

#include "provkit/error.hpp"
#include "provkit/fsutil.hpp"

namespace provkit::ccshim {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto end = s.find(sep, start);
    out.emplace_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// ---- response files ----

// libiberty's buildargv: whitespace separates; '...' and "..." group;
// a backslash takes the next character literally, inside quotes too.
std::vector<std::string> split_response_text(const std::string& text) {
  std::vector<std::string> out;
  std::string arg;
  bool in_arg = false, squote = false, dquote = false, escaped = false;
  for (char c : text) {
    if (escaped) {
      arg += c;
      escaped = false;
      in_arg = true;
    } else if (c == '\\') {
      escaped = true;
      in_arg = true;
    } else if (squote) {
      if (c == '\'') squote = false; else arg += c;
    } else if (dquote) {
      if (c == '"') dquote = false; else arg += c;
    } else if (c == '\'') {
      squote = in_arg = true;
    } else if (c == '"') {
      dquote = in_arg = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_arg) out.push_back(std::move(arg));
      arg.clear();
      in_arg = false;
    } else {
      arg += c;
      in_arg = true;
    }
  }
  if (in_arg) out.push_back(std::move(arg));
  return out;
}

void expand_into(const std::vector<std::string>& args, const SearchContext& ctx, int& expansions,
                 std::vector<std::string>& out) {
  for (const auto& arg : args) {
    if (arg.size() < 2 || arg[0] != '@') {
      out.push_back(arg);
      continue;
    }
    fs::path file = arg.substr(1);
    auto text = ctx.read_response_file(file);
    if (!text) {  // gcc leaves an unreadable @file as it is (then reports it as a missing input)
      out.push_back(arg);
      continue;
    }
    if (++expansions > max_response_file_expansions)
      throw input_error(file.string(), 0,
                        "too many @-files encountered (more than " + std::to_string(max_response_file_expansions) +
                            " response files expanded; does a file include itself?)");
    expand_into(split_response_text(*text), ctx, expansions, out);
  }
}

// ---- gcc's options: one table ----

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

// How an option and its value are spelled.
enum Shape : unsigned {
  flag = 0,      // exactly the name
  separate = 1,  // the name, then the value as the next argument
  joined = 2,    // the value glued to the name (-Ldir); with `separate`, either
  prefix = 4,    // any argument starting with the name (-march=...)
};

struct GccOption {
  std::string_view name;
  unsigned shape;
  Rule rule;
};

// Every option the shim must know: those it changes, and those whose value
// must never be read as an option of its own (`-o -march=x`, `-D -u`).
constexpr std::array<GccOption, 55> gcc_options = {{
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
}};

// One argument as the table reads it: the option (nullptr for an input file
// or an option the shim passes on without knowing it), its value, and how
// many argv entries it took.
struct ParsedArg {
  const GccOption* option = nullptr;
  std::string value;
  bool value_separate = false;
};

ParsedArg parse_one(const std::vector<std::string>& args, std::size_t i) {
  const auto& a = args[i];
  for (const auto& opt : gcc_options) {
    if ((opt.shape & prefix) && starts_with(a, opt.name)) return {&opt, a.substr(opt.name.size()), false};
    if (a == opt.name) {
      if ((opt.shape & separate) && i + 1 < args.size()) return {&opt, args[i + 1], true};
      return {&opt, "", false};
    }
    if ((opt.shape & joined) && a.size() > opt.name.size() && starts_with(a, opt.name))
      return {&opt, a.substr(opt.name.size()), false};
  }
  return {};
}

bool is_option(const ParsedArg& p, std::string_view name) { return p.option && p.option->name == name; }

// A C/C++/assembler source gcc would compile (so it is not a linker operand).
bool is_source_file(std::string_view a) {
  static constexpr std::array<std::string_view, 14> suffixes = {
      ".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".cp", ".i", ".ii", ".m", ".mm", ".s", ".S", ".sx"};
  auto dot = a.rfind('.');
  if (dot == std::string_view::npos) return false;
  return std::find(suffixes.begin(), suffixes.end(), a.substr(dot)) != suffixes.end();
}

// ---- GNU ld's options, as they reach it through -Wl, and -Xlinker ----

struct LinkerOption {
  std::string_view name;
  bool takes_value;  // the next linker argument is its value
  bool drop;         // zig's -Wl parser rejects it and leaving it out changes nothing in the output
  bool prefix;       // matches any argument starting with the name
};

// Dropped ones: diagnostics, link speed, layout, or what lld does anyway
// (docs/cc-shim.md). Those taking a value are listed so that their value is
// never read as an option, and `-Wl,-rpath DIR` (the value as gcc's next
// argument) is paired as ld pairs it.
constexpr std::array<LinkerOption, 46> linker_options = {{
    {"-rpath", true, false, false},         {"-R", true, false, false},
    {"-soname", true, false, false},        {"-h", true, false, false},
    {"-e", true, false, false},             {"--entry", true, false, false},
    {"-u", true, false, false},             {"--undefined", true, false, false},
    {"-T", true, false, false},             {"--script", true, false, false},
    {"-Map", true, false, false},           {"--version-script", true, false, false},
    {"-o", true, false, false},             {"--output", true, false, false},
    {"-L", true, false, false},             {"-l", true, false, false},
    {"--library", true, false, false},      {"--library-path", true, false, false},
    {"--dynamic-linker", true, false, false}, {"-I", true, false, false},
    {"-y", true, false, false},             {"--trace-symbol", true, false, false},
    {"--defsym", true, false, false},       {"--wrap", true, false, false},
    {"--exclude-libs", true, false, false}, {"--dynamic-list", true, false, false},
    {"-m", true, false, false},             {"--hash-style", true, false, false},
    {"--rpath-link", true, true, false},    {"-rpath-link", true, true, false},
    {"-stats", false, true, false},         {"--stats", false, true, false},
    {"--no-undefined-version", false, true, false}, {"--fatal-warnings", false, true, false},
    {"--warn-common", false, true, false},  {"--enable-new-dtags", false, true, false},
    {"-Bsymbolic-functions", false, true, false}, {"--no-add-needed", false, true, false},
    {"--no-copy-dt-needed-entries", false, true, false}, {"--threads", false, true, true},
    {"--no-threads", false, true, true},    {"-plugin-opt", false, true, true},
    {"--plugin-opt", false, true, true},    {"--icf=", false, true, true},
    {"-rpath-link=", false, true, true},    {"--rpath-link=", false, true, true},
}};

const LinkerOption* find_linker_option(std::string_view t) {
  for (const auto& opt : linker_options)
    if (opt.prefix ? starts_with(t, opt.name) : t == opt.name) return &opt;
  return nullptr;
}

bool is_droppable_z_keyword(std::string_view k) {
  static constexpr std::array<std::string_view, 5> keywords = {
      "separate-code", "noseparate-code", "combreloc", "pack-relative-relocs", "nopack-relative-relocs"};
  return std::find(keywords.begin(), keywords.end(), k) != keywords.end();
}

// The stream of linker arguments in command-line order, across -Wl, lists,
// -Xlinker arguments and gcc's own positional arguments: an option's value
// may come in any of them, as GNU ld reads its argv.
class LinkerArgs {
 public:
  // The items of one -Wl, list or one -Xlinker argument that are kept.
  std::vector<std::string> filter(const std::vector<std::string>& tokens) {
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const auto& t = tokens[i];
      if (pending_ != Pending::none) {  // the value of the option before
        if (pending_ == Pending::keep) kept.push_back(t);
        pending_ = Pending::none;
        continue;
      }
      if (t == "-z") {
        if (i + 1 == tokens.size()) {
          kept.push_back(t);
          pending_ = Pending::keep;
        } else if (is_droppable_z_keyword(tokens[i + 1])) {
          ++i;
        } else {
          kept.insert(kept.end(), {t, tokens[++i]});
        }
        continue;
      }
      if (starts_with(t, "-z") && is_droppable_z_keyword(std::string_view(t).substr(2))) continue;
      note_link_mode(t);
      if (const auto* opt = find_linker_option(t)) {
        if (opt->takes_value && !opt->prefix) pending_ = opt->drop ? Pending::drop : Pending::keep;
        if (opt->drop) continue;
      }
      kept.push_back(t);
    }
    return kept;
  }

  // True when the last linker option takes a value that has not come yet.
  bool awaiting_value() const { return pending_ != Pending::none; }

  // gcc's next argument as that value; true when it is to be kept.
  bool take_value() {
    bool keep = pending_ == Pending::keep;
    pending_ = Pending::none;
    return keep;
  }

  // -Bstatic and its synonyms are in force: -lNAME takes only libNAME.a.
  bool static_mode() const { return static_; }

 private:
  void note_link_mode(std::string_view t) {
    if (t == "-Bstatic" || t == "-dn" || t == "-non_shared" || t == "-static") static_ = true;
    if (t == "-Bdynamic" || t == "-dy" || t == "-call_shared") static_ = false;
  }
  enum class Pending { none, keep, drop } pending_ = Pending::none;
  bool static_ = false;
};

// `-Wp,-MD,FILE` (kbuild style) and friends: zig cc expects the dependency
// file where it asked clang to write it, so give the driver spelling instead.
void translate_preprocessor_args(const std::string& arg, std::vector<std::string>& out) {
  auto tokens = split(std::string_view(arg).substr(4), ',');
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    bool has_next = i + 1 < tokens.size();
    if ((t == "-MD" || t == "-MMD") && has_next) {
      out.insert(out.end(), {t, "-MF", tokens[++i]});
    } else if ((t == "-MT" || t == "-MQ" || t == "-MF") && has_next) {
      out.insert(out.end(), {t, tokens[++i]});
    } else {
      rest.push_back(t);
    }
  }
  if (rest.size() == tokens.size()) {
    out.push_back(arg);
  } else if (!rest.empty()) {
    out.push_back("-Wp," + join(rest, ','));
  }
}

// ---- warnings: gcc's defaults, not clang's ----

// A diagnostic clang gives by default that gcc (12) gives only when asked,
// or never. Unless the command line asks for it in gcc's terms (an enabler,
// or -W<name> / -Werror=<name>), `-Wno-<name>` goes after the caller's
// arguments, where no -Wall can turn it back on.
struct QuietWarning {
  std::string_view name;
  std::array<std::string_view, 4> enabled_by;  // gcc options that turn it on; empty: none (clang-only)
};
constexpr std::array<QuietWarning, 8> quiet_warnings = {{
    {"pointer-sign", {"-Wall", "-Wpedantic", "-pedantic", "-pedantic-errors"}},  // Triton's launcher stub
    {"parentheses", {"-Wall"}},
    {"format", {"-Wall", "-Wformat=1", "-Wformat=2"}},
    {"unused-comparison", {"-Wall", "-Wunused-value", "-Wunused"}},  // gcc's -Wunused-value
    {"parentheses-equality", {}},
    {"string-plus-int", {}},
    {"unused-command-line-argument", {}},  // e.g. -L or -Wl, flags on a -c compile
    {"unknown-warning-option", {}},        // gcc-only -Wno-stringop-overflow and the like
}};

// Errors in clang 16 that gcc 12 gives as warnings; `-Wno-error=<name>`
// goes first (so a caller's own -Werror=<name> wins), unless -Werror is given.
constexpr std::array<std::string_view, 4> warnings_not_errors = {
    "implicit-function-declaration", "implicit-int", "int-conversion", "incompatible-function-pointer-types"};

bool asks_for(const std::vector<std::string>& args, const QuietWarning& w) {
  const std::string flag = "-W" + std::string(w.name), as_error = "-Werror=" + std::string(w.name);
  for (const auto& a : args) {
    if (a == flag || a == as_error) return true;
    for (auto e : w.enabled_by)
      if (!e.empty() && a == e) return true;
  }
  return false;
}

// zig reads '-' in a CPU name as "minus this feature" (x86-64 = cpu x86 minus
// feature 64); its CPU names spell the gcc/LLVM hyphens as underscores.
std::string zig_cpu_name(std::string_view value) {
  std::string out(value);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::optional<elf::Identity> identity_of_triple(std::string_view triple) {
  auto arch = triple.substr(0, triple.find('-'));
  elf::Identity id;
  id.type = ET_DYN;
  if (arch == "x86_64" || arch == "amd64") {
    id.elf_class = ELFCLASS64, id.machine = EM_X86_64;
  } else if (arch == "i386" || arch == "i486" || arch == "i586" || arch == "i686" || arch == "x86") {
    id.elf_class = ELFCLASS32, id.machine = EM_386;
  } else if (arch == "aarch64" || arch == "arm64") {
    id.elf_class = ELFCLASS64, id.machine = EM_AARCH64;
  } else if (starts_with(arch, "arm") || starts_with(arch, "thumb")) {
    id.elf_class = ELFCLASS32, id.machine = EM_ARM;
  } else if (arch == "riscv64") {
    id.elf_class = ELFCLASS64, id.machine = EM_RISCV;
  } else if (arch == "powerpc64le" || arch == "ppc64le") {
    id.elf_class = ELFCLASS64, id.machine = EM_PPC64;
  } else {
    return std::nullopt;
  }
  return id;
}

bool same_abi(const elf::Identity& a, const elf::Identity& b) {
  return a.elf_class == b.elf_class && a.machine == b.machine;
}

}  // namespace

std::vector<std::string> expand_response_files(const std::vector<std::string>& args, const SearchContext& ctx) {
  std::vector<std::string> out;
  out.reserve(args.size());
  int expansions = 0;
  expand_into(args, ctx, expansions, out);
  return out;
}

elf::Identity target_identity(const std::vector<std::string>& args, const elf::Identity& host) {
  elf::Identity target = host;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    std::optional<elf::Identity> named;
    if (is_option(p, "-m32") && host.machine == EM_X86_64) {
      named = elf::Identity{ELFCLASS32, EM_386, ET_DYN};
    } else if (is_option(p, "-m64")) {
      named = host;
    } else if (p.option && p.option->rule == Rule::target && !p.value.empty()) {
      named = identity_of_triple(p.value);
    }
    if (named) target = *named;
    if (p.value_separate) ++i;
  }
  return target;
}

std::optional<fs::path> resolve_exact_library(const std::string& name, const std::vector<fs::path>& l_dirs,
                                              const elf::Identity& target, const SearchContext& ctx) {
  auto accept = [&](const fs::path& candidate) {
    auto id = ctx.probe(candidate);
    return id && same_abi(*id, target);
  };
  auto absolute = [](const fs::path& p) { return fs::absolute(p).lexically_normal(); };
  for (const auto* dirs : {&l_dirs, &ctx.library_path}) {
    for (const auto& dir : *dirs)
      if (accept(dir / name)) return absolute(dir / name);
  }
  if (ctx.ld_so_cache) {
    for (const auto& entry : ctx.ld_so_cache())
      if (entry.name == name && accept(entry.path)) return absolute(entry.path);
  }
  for (const auto& dir : ctx.default_dirs)
    if (accept(dir / name)) return absolute(dir / name);
  return std::nullopt;
}

std::optional<fs::path> library_past_incompatible(const std::string& name, const std::vector<fs::path>& l_dirs,
                                                  bool static_only, const elf::Identity& target,
                                                  const SearchContext& ctx) {
  bool skipped = false;
  std::vector<std::string> files;
  if (!static_only) files.push_back("lib" + name + ".so");
  files.push_back("lib" + name + ".a");
  for (const auto* dirs : {&l_dirs, &ctx.library_path, &ctx.system_library_dirs}) {
    for (const auto& dir : *dirs) {
      for (const auto& file : files) {
        auto candidate = dir / file;
        if (!ctx.is_regular_file(candidate)) continue;
        auto id = ctx.probe(candidate);
        if (id && !same_abi(*id, target)) {  // GNU ld: "skipping incompatible"
          skipped = true;
          continue;
        }
        // An ELF of the target, or an archive or linker script: what ld takes.
        if (!skipped) return std::nullopt;
        return fs::absolute(candidate).lexically_normal();
      }
    }
  }
  return std::nullopt;
}

std::string multiarch_triple(const elf::Identity& id) {
  switch (id.machine) {
    case EM_X86_64: return id.elf_class == ELFCLASS64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
    case EM_386: return "i386-linux-gnu";
    case EM_AARCH64: return "aarch64-linux-gnu";
    case EM_ARM: return "arm-linux-gnueabihf";
    case EM_RISCV: return "riscv64-linux-gnu";
    case EM_PPC64: return "powerpc64le-linux-gnu";
    case EM_S390: return "s390x-linux-gnu";
    default: return "";
  }
}

namespace {

bool names_target(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    if (p.option && p.option->rule == Rule::target) return true;
    if (p.value_separate) ++i;
  }
  return false;
}

}  // namespace

std::optional<std::string> answer_query(const std::vector<std::string>& raw_args, const SearchContext& ctx) {
  const auto args = expand_response_files(raw_args, ctx);
  bool dumpmachine = false, multiarch = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    dumpmachine |= is_option(p, "-dumpmachine");
    multiarch |= is_option(p, "-print-multiarch");
    if (p.value_separate) ++i;
  }
  if (!(dumpmachine || multiarch) || names_target(args)) return std::nullopt;
  if (!ctx.glibc_version || !ctx.glibc_version()) return std::nullopt;
  // gcc -dumpmachine names the compiler's own machine whatever -m32 says;
  // -print-multiarch names the target's directory triple.
  auto triple = multiarch_triple(dumpmachine ? ctx.host : target_identity(args, ctx.host));
  if (triple.empty()) return std::nullopt;
  return triple + "\n";
}

std::vector<std::string> translate(const std::vector<std::string>& raw_args, const SearchContext& ctx) {
  const auto args = expand_response_files(raw_args, ctx);

  // Facts about the whole command line first: -L applies to every -l, wherever it stands.
  std::vector<fs::path> l_dirs;
  bool caller_sanitizes = false, caller_target = false, static_link = false, no_std_includes = false,
       warnings_are_errors = false, m32 = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    if (p.option) {
      switch (p.option->rule) {
        case Rule::library_dir: l_dirs.emplace_back(p.value); break;
        case Rule::target: caller_target = true; break;
        default: break;
      }
      caller_sanitizes |= is_option(p, "-fsanitize=");
      static_link |= is_option(p, "-static");
      no_std_includes |= is_option(p, "-nostdinc") || is_option(p, "--sysroot") || is_option(p, "--sysroot=") ||
                         is_option(p, "-isysroot");
      m32 |= is_option(p, "-m32");
    }
    warnings_are_errors |= args[i] == "-Werror";
    if (p.value_separate) ++i;
  }
  const auto target = target_identity(args, ctx.host);
  // ld.so.cache is read at most once, and only when an -l: gets that far.
  SearchContext search = ctx;
  auto cache = std::make_shared<std::optional<std::vector<elf::CacheEntry>>>();
  search.ld_so_cache = [cache, read = ctx.ld_so_cache] {
    if (!*cache) *cache = read ? read() : std::vector<elf::CacheEntry>{};
    return **cache;
  };

  std::vector<std::string> out;
  out.reserve(args.size() + 16);
  // zig's own libc detection cannot work here (see docs: zig's libc
  // detection), and without it zig builds against glibc 2.19 stubs and
  // headers. gcc builds against the host's glibc: tell zig which one, keeping
  // the native CPU and OS. An explicit target drops zig's native search dirs,
  // so gcc's system dirs are given at the end.
  std::optional<std::string> glibc;
  if (!caller_target && !m32 && ctx.glibc_version) glibc = ctx.glibc_version();
  if (glibc) out.insert(out.end(), {"-target", "native-native-gnu." + *glibc});
  // zig turns UBSan traps on in debug builds; gcc does not. zig 0.11 consumes
  // `-fsanitize=undefined` itself and puts it ahead of pass-through flags, so a
  // blanket -fno-sanitize=all would cancel a caller's own request: only add it
  // when the caller asks for no sanitizer.
  if (!caller_sanitizes) out.push_back("-fno-sanitize=all");
  if (!warnings_are_errors)
    for (auto w : warnings_not_errors) out.push_back("-Wno-error=" + std::string(w));

  LinkerArgs linker;
  auto emit_linker = [&](const std::vector<std::string>& kept, bool as_xlinker) {
    if (kept.empty()) return;
    if (!as_xlinker) {
      out.push_back("-Wl," + join(kept, ','));
      return;
    }
    for (const auto& k : kept) out.insert(out.end(), {"-Xlinker", k});
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto p = parse_one(args, i);
    // The spelling as given: one argument, or the option and its value.
    auto as_given = [&] {
      out.push_back(a);
      if (p.value_separate) out.push_back(args[++i]);
    };
    if (!p.option) {
      // `-Wl,-rpath DIR`: gcc hands DIR to ld right after -rpath, as its value.
      if (linker.awaiting_value() && !starts_with(a, "-") && !is_source_file(a)) {
        if (linker.take_value()) out.insert(out.end(), {"-Xlinker", a});
        continue;
      }
      out.push_back(a);
      continue;
    }
    switch (p.option->rule) {
      case Rule::pass:
      case Rule::library_dir:
      case Rule::target:
        as_given();
        break;
      case Rule::drop:
        if (p.value_separate) ++i;
        break;
      case Rule::library: {
        const auto& v = p.value;
        if (starts_with(v, ":") && v.size() > 1) {
          auto found = resolve_exact_library(v.substr(1), l_dirs, target, search);
          if (found) {
            out.push_back(found->string());
            if (p.value_separate) ++i;
          } else {
            as_given();  // the linker's own error, never the shim's guess
          }
        } else if (v == "gcc" || v == "gcc_eh") {
          // libgcc's role (compiler runtime, unwinder) is zig's compiler_rt and libunwind, always linked
          if (p.value_separate) ++i;
        } else if (auto path = v.empty() ? std::nullopt
                                         : library_past_incompatible(v, l_dirs, static_link || linker.static_mode(),
                                                                     target, search)) {
          out.push_back(path->string());
          if (p.value_separate) ++i;
        } else {
          as_given();
        }
        break;
      }
      case Rule::undefined_symbol:
        if (p.value_separate) {
          out.push_back("-Wl,-u," + p.value);
          ++i;
        } else {
          out.push_back(a);
        }
        break;
      case Rule::cpu: {
        auto eq = a.find('=') + 1;
        out.push_back(a.substr(0, eq) + zig_cpu_name(p.value));
        break;
      }
      case Rule::tune:  // gcc tunes scheduling only; zig takes it as the CPU to build for
        break;
      case Rule::linker:
        emit_linker(linker.filter(split(p.value, ',')), false);
        break;
      case Rule::linker_arg:
        if (p.value_separate) {
          emit_linker(linker.filter({p.value}), true);
          ++i;
        } else {
          out.push_back(a);
        }
        break;
      case Rule::preprocessor:
        translate_preprocessor_args(a, out);
        break;
    }
  }

  for (const auto& w : quiet_warnings)
    if (!asks_for(args, w)) out.push_back("-Wno-" + std::string(w.name));
  if (glibc) {
    if (!no_std_includes)
      for (const auto& dir : ctx.system_include_dirs) out.insert(out.end(), {"-idirafter", dir.string()});
    for (const auto* dirs : {&ctx.library_path, &ctx.system_library_dirs})
      for (const auto& dir : *dirs) out.push_back("-L" + dir.string());
  }
  return out;
}

std::optional<std::string> quote_for_zig_response_file(const std::string& arg) {
  if (arg.find('\'') != std::string::npos) return std::nullopt;
  // Inside "...": backslashes are literal unless a quote follows; then 2n
  // backslashes give n, and 2n+1 give n and a literal quote.
  std::string out = "\"";
  std::size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    if (c == '"') {
      out.append(backslashes * 2 + 1, '\\');
    } else {
      out.append(backslashes, '\\');
    }
    backslashes = 0;
    out += c;
  }
  out.append(backslashes * 2, '\\');
  return out + "\"";
}

std::vector<std::string> pack_for_exec(const std::vector<std::string>& args,
                                       const std::function<std::string(const std::string&)>& write_file,
                                       std::size_t max_inline) {
  std::size_t bytes = 0;
  for (const auto& a : args) bytes += a.size() + 1 + sizeof(char*);
  if (bytes <= max_inline) return args;
  std::vector<std::string> out;
  std::string text;
  auto flush = [&] {
    if (text.empty()) return;
    out.push_back("@" + write_file(text));
    text.clear();
  };
  for (const auto& a : args) {
    if (auto quoted = quote_for_zig_response_file(a)) {
      text += *quoted;
      text += '\n';
    } else {
      flush();
      out.push_back(a);
    }
  }
  flush();
  return out;
}

SearchContext system_context() {
  SearchContext ctx;
  for (auto& dir : split(getenv_str("LIBRARY_PATH"), ':'))
    if (!dir.empty()) ctx.library_path.emplace_back(dir);
  ctx.ld_so_cache = [] { return elf::read_ld_so_cache(); };
  ctx.default_dirs = elf::default_library_dirs();
  ctx.host = elf::host_identity();
  ctx.probe = [](const fs::path& p) { return elf::read_identity(p); };
  ctx.is_regular_file = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
  };
  ctx.read_response_file = [](const fs::path& p) -> std::optional<std::string> {
    try {
      return read_file(p);
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  // The system's libc.so.6: in the loader's default dirs (where glibc
  // installs it), else wherever /etc/ld.so.cache says. The default dirs
  // first, as reading the cache costs more than the rest of a call.
  ctx.glibc_version = [host = ctx.host, dirs = ctx.default_dirs]() -> std::optional<std::string> {
    elf::SearchContext loader;
    loader.default_dirs = dirs;
    loader.want = host;
    auto libc = elf::find_library("libc.so.6", loader);
    if (!libc.path) {
      loader.cache = elf::read_ld_so_cache();
      libc = elf::find_library("libc.so.6", loader);
    }
    if (!libc.path) return std::nullopt;
    return elf::glibc_version(*libc.path);
  };
  auto existing = [](std::initializer_list<std::string> dirs) {
    std::vector<fs::path> out;
    for (const auto& d : dirs) {
      std::error_code ec;
      if (fs::is_directory(d, ec)) out.emplace_back(d);
    }
    return out;
  };
  if (auto ma = multiarch_triple(ctx.host); !ma.empty()) {
    ctx.system_include_dirs = existing({"/usr/local/include", "/usr/include/" + ma, "/usr/include"});
    // GNU ld's SEARCH_DIRs on Debian/Ubuntu, in its order (`ld --verbose`).
    ctx.system_library_dirs = existing({"/usr/local/lib/" + ma, "/lib/" + ma, "/usr/lib/" + ma, "/usr/local/lib64",
                                        "/lib64", "/usr/lib64", "/usr/local/lib", "/lib", "/usr/lib"});
  }
  return ctx;
}

// ---- finding zig ----

namespace {

bool is_executable_file(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

bool is_self(const fs::path& candidate, const fs::path& self_exe) {
  std::error_code ec;
  return !self_exe.empty() && fs::equivalent(candidate, self_exe, ec);
}

}  // namespace

ZigSearch locate_zig(const ZigQuery& q) {
  ZigSearch result;
  if (!q.cc_shim_zig.empty()) {
    fs::path zig = q.cc_shim_zig;
    if (!is_executable_file(zig)) {
      result.looked.push_back("CC_SHIM_ZIG=" + q.cc_shim_zig + " (not an executable file)");
    } else if (is_self(zig, q.self_exe)) {
      result.looked.push_back("CC_SHIM_ZIG=" + q.cc_shim_zig + " (that is cc-shim itself)");
    } else {
      result.zig = zig;
      result.how = "CC_SHIM_ZIG";
    }
    return result;  // an explicit choice is the only candidate
  }

  for (const auto& entry : split(q.path_env, ':')) {
    fs::path zig = fs::path(entry.empty() ? "." : entry) / "zig";
    if (is_executable_file(zig) && !is_self(zig, q.self_exe)) {
      result.zig = zig;
      result.how = "PATH";
      return result;
    }
  }
  result.looked.push_back("zig on PATH (" + q.path_env + ")");

  for (const auto& shim_dir : q.shim_dirs) {
    for (const char* lib : {"lib", "lib64"}) {
      fs::path lib_dir = (shim_dir / ".." / lib).lexically_normal();
      result.looked.push_back((lib_dir / "python3*/site-packages/ziglang/zig").string());
      std::error_code ec;
      std::vector<fs::path> pythons;
      for (const auto& e : fs::directory_iterator(lib_dir, ec)) {
        auto name = e.path().filename().string();
        if (starts_with(name, "python3")) pythons.push_back(e.path());
      }
      std::sort(pythons.begin(), pythons.end());  // deterministic when a venv has several
      for (const auto& py : pythons) {
        fs::path zig = py / "site-packages" / "ziglang" / "zig";
        if (is_executable_file(zig) && !is_self(zig, q.self_exe)) {
          result.zig = zig;
          result.how = "ziglang package";
          result.looked.clear();
          return result;
        }
      }
    }
  }
  return result;
}

bool called_as_cxx(const std::string& argv0) {
  auto name = fs::path(argv0).filename().string();
  return name.size() >= 2 && name.compare(name.size() - 2, 2, "++") == 0;
}

std::string shell_quote(const std::string& arg) {
  static constexpr std::string_view safe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
  if (!arg.empty() && arg.find_first_not_of(safe) == std::string::npos) return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') out += "'\\''"; else out += c;
  }
  return out + "'";
}

}  // namespace provkit::ccshim
