#include "translate.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string_view>

#include "options.hpp"
#include "provkit/util/strings.hpp"
#include "response.hpp"

namespace provkit::ccshim {

namespace {

using util::join;
using util::split;

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
      if (t.starts_with("-z") && is_droppable_z_keyword(std::string_view(t).substr(2))) continue;
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
  } else if (arch.starts_with("arm") || arch.starts_with("thumb")) {
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

namespace {

// One row per architecture the shim knows: how Debian's multiarch directories
// name it (gcc -dumpmachine) and how zig's target triples do.
struct ArchNames {
  std::uint16_t machine;
  unsigned char elf_class;
  const char* multiarch;  // "x86_64-linux-gnu"
  const char* zig;        // "x86_64"; empty: no zig glibc target is chosen for it
  // zig's CPU for an explicit target is the baseline, gcc's default on Debian
  // (`-march=x86-64`, armv8-a): true where that holds, so nothing is added;
  // elsewhere -march=native keeps zig's native CPU.
  bool baseline_is_gccs = false;
};
constexpr ArchNames kArchitectures[] = {
    {EM_X86_64, ELFCLASS64, "x86_64-linux-gnu", "x86_64", true},
    {EM_X86_64, 0, "x86_64-linux-gnux32", ""},
    {EM_386, 0, "i386-linux-gnu", "x86"},
    {EM_AARCH64, 0, "aarch64-linux-gnu", "aarch64", true},
    {EM_ARM, 0, "arm-linux-gnueabihf", "arm"},
    {EM_RISCV, ELFCLASS64, "riscv64-linux-gnu", "riscv64"},
    {EM_RISCV, 0, "riscv64-linux-gnu", ""},
    {EM_PPC64, 0, "powerpc64le-linux-gnu", "powerpc64le"},
    {EM_S390, 0, "s390x-linux-gnu", "s390x"},
};

// The row for `id`: the first of its machine whose class is its own or 0 (any).
const ArchNames* arch_names(const elf::Identity& id) {
  for (const auto& a : kArchitectures)
    if (a.machine == id.machine && (a.elf_class == 0 || a.elf_class == id.elf_class)) return &a;
  return nullptr;
}

}  // namespace

std::string multiarch_triple(const elf::Identity& id) {
  const ArchNames* a = arch_names(id);
  return a ? a->multiarch : "";
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

namespace {

// Facts about the whole command line, read before any argument is translated.
struct CommandFacts {
  std::vector<fs::path> l_dirs;  // -L applies to every -l, wherever it stands
  bool caller_sanitizes = false, caller_target = false, caller_cpu = false, static_link = false,
       no_std_includes = false, warnings_are_errors = false, m32 = false;
  bool caller_pic = false;   // any -f[no-]pic/PIC/pie/PIE: the caller chose the code model
  bool caller_fp = false;    // -ffast-math, -Ofast, -f[no-]trapping-math, ...: the caller chose FP semantics
  bool links = true;         // not -c, -S, -E, -M, -MM, -fsyntax-only
  bool no_pie_link = false;  // -shared, -r, -static, -static-pie, -no-pie, -pie: the link is not gcc's default PIE
};

// The options by which a caller says whether floating-point code may raise exceptions the source would not:
// gcc's and clang's names of fast-math and trapping-math, and clang's own.
bool sets_fp_semantics(const std::string& a) {
  static constexpr std::string_view exact[] = {"-ffast-math",
                                               "-fno-fast-math",
                                               "-Ofast",
                                               "-ftrapping-math",
                                               "-fno-trapping-math",
                                               "-funsafe-math-optimizations",
                                               "-fno-unsafe-math-optimizations"};
  for (auto e : exact)
    if (a == e) return true;
  return a.rfind("-ffp-exception-behavior=", 0) == 0 || a.rfind("-ffp-model=", 0) == 0;
}

CommandFacts read_facts(const std::vector<std::string>& args) {
  CommandFacts f;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    if (p.option) {
      switch (p.option->rule) {
        case Rule::library_dir: f.l_dirs.emplace_back(p.value); break;
        case Rule::target: f.caller_target = true; break;
        case Rule::cpu: f.caller_cpu = true; break;
        default: break;
      }
      const auto name = p.option->name;
      f.caller_sanitizes |= name == "-fsanitize=";
      f.static_link |= name == "-static";
      f.no_std_includes |= name == "-nostdinc" || name == "--sysroot" || name == "--sysroot=" || name == "-isysroot";
      f.m32 |= name == "-m32";
      f.caller_pic |= name == "-fPIC" || name == "-fpic" || name == "-fPIE" || name == "-fpie" || name == "-fno-PIC" ||
                      name == "-fno-pic" || name == "-fno-PIE" || name == "-fno-pie";
      if (name == "-c" || name == "-S" || name == "-E" || name == "-M" || name == "-MM" || name == "-fsyntax-only")
        f.links = false;
      f.no_pie_link |= name == "-shared" || name == "-r" || name == "-static" || name == "-static-pie" ||
                       name == "-no-pie" || name == "-pie";
    }
    f.warnings_are_errors |= args[i] == "-Werror";
    f.caller_fp |= sets_fp_semantics(args[i]);
    if (p.value_separate) ++i;
  }
  return f;
}

// The glibc release the shim builds against, when it sets the target: the
// caller names none and builds for the host's own ABI.
std::optional<std::string> shim_glibc(const CommandFacts& f, const SearchContext& ctx) {
  if (f.caller_target || f.m32 || !ctx.glibc_version) return std::nullopt;
  auto host = ctx.glibc_version();
  if (!host) return std::nullopt;
  return glibc_zig_can_build(*host, ctx.zig_newest_glibc ? ctx.zig_newest_glibc() : std::nullopt);
}

// zig's name of the host's architecture in a target triple; empty when unknown.
std::string zig_arch(const elf::Identity& id) {
  const ArchNames* a = arch_names(id);
  return a ? a->zig : "";
}

// "2.36" or "2.34.0" as (major, minor); nullopt when it is no release number.
std::optional<std::pair<int, int>> glibc_release(std::string_view v) {
  int major = 0, minor = 0;
  char tail = 0;
  std::string s(v);
  int n = std::sscanf(s.c_str(), "%d.%d%c", &major, &minor, &tail);
  if (n < 2 || (n == 3 && tail != '.')) return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace

std::string glibc_zig_can_build(const std::string& host, const std::optional<std::string>& zig_newest) {
  auto h = glibc_release(host);
  auto z = zig_newest ? glibc_release(*zig_newest) : std::nullopt;
  if (!h || !z || *h <= *z) return host;
  return std::to_string(z->first) + "." + std::to_string(z->second);
}

std::optional<std::string> zig_libc_file(const std::vector<std::string>& raw_args, const SearchContext& ctx) {
  if (!ctx.host_libc) return std::nullopt;
  const auto args = expand_response_files(raw_args, ctx);
  const auto facts = read_facts(args);
  if (facts.no_std_includes || !shim_glibc(facts, ctx)) return std::nullopt;
  // zig's libc file (`zig libc` prints the format); the lines zig needs for Linux.
  return "include_dir=" + ctx.host_libc->include_dir.string() + "\n" +
         "sys_include_dir=" + ctx.host_libc->sys_include_dir.string() + "\n" +
         "crt_dir=" + ctx.host_libc->crt_dir.string() + "\n" + "msvc_lib_dir=\nkernel32_lib_dir=\ngcc_dir=\n";
}

bool asks_linker_version(const std::vector<std::string>& raw_args, const SearchContext& ctx) {
  const auto args = expand_response_files(raw_args, ctx);
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    if (p.option && p.option->rule == Rule::linker)
      for (const auto& t : split(p.value, ','))
        if (t == "--version") return true;
    if (p.option && p.option->rule == Rule::linker_arg && p.value == "--version") return true;
    if (p.value_separate) ++i;
  }
  return false;
}

bool command_links(const std::vector<std::string>& raw_args, const SearchContext& ctx) {
  return read_facts(expand_response_files(raw_args, ctx)).links;
}

std::string gcc_driver_warnings(const std::vector<std::string>& raw_args, bool cxx, const SearchContext& ctx) {
  if (cxx) return "";
  const auto args = expand_response_files(raw_args, ctx);
  std::vector<std::string> rtti;  // as given, in order
  int c_sources = 0;
  std::string language;  // the -x in force ("" or "none": by suffix)
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto p = parse_one(args, i);
    if (is_option(p, "-x")) language = p.value;
    if (!p.option && (args[i] == "-frtti" || args[i] == "-fno-rtti")) rtti.push_back(args[i]);
    if (!p.option && !args[i].starts_with("-") && !args[i].empty()) {
      bool c = language.empty() || language == "none" ? args[i].ends_with(".c") : language == "c";
      c_sources += c;
    }
    if (!p.option && args[i] == "-" && language == "c") ++c_sources;
    if (p.value_separate) ++i;
  }
  std::string out;
  for (int n = 0; n < c_sources; ++n)
    for (const auto& r : rtti)
      out += "cc1: warning: command-line option '" + r + "' is valid for C++/D/ObjC++ but not for C\n";
  return out;
}

std::vector<std::string> translate(const std::vector<std::string>& raw_args, const SearchContext& ctx) {
  const auto args = expand_response_files(raw_args, ctx);
  const auto facts = read_facts(args);
  const auto& l_dirs = facts.l_dirs;
  const bool static_link = facts.static_link;
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
  // headers. gcc builds against the host's glibc: tell zig which one (never
  // newer than zig can build stubs for, or zig warns on every link), for the
  // host's architecture spelled out (zig hands a `native` triple to clang
  // unresolved when it reads stdin) and gcc's baseline CPU. An explicit target drops zig's native search dirs, so gcc's
  // system dirs are given at the end.
  const auto glibc = shim_glibc(facts, ctx);
  const auto arch = glibc ? zig_arch(ctx.host) : std::string();
  if (glibc && !arch.empty()) {
    out.insert(out.end(), {"-target", arch + "-linux-gnu." + *glibc});
    // gcc's CPU, the distribution's baseline, not this machine's: code built
    // for an AVX-512 host stopped json-c's tests under valgrind (SIGILL). No
    // -march for it: zig's name (x86_64) is not clang's (x86-64), and zig
    // hands stdin compiles (`cc -E -dM -`) to clang as they are.
    const ArchNames* names = arch_names(ctx.host);
    if (!facts.caller_cpu && !(names && names->baseline_is_gccs)) out.emplace_back("-march=native");
  } else if (glibc) {
    out.insert(out.end(), {"-target", "native-native-gnu." + *glibc});
  }
  // zig turns UBSan traps on in debug builds; gcc does not. zig 0.11 consumes
  // `-fsanitize=undefined` itself and puts it ahead of pass-through flags, so a
  // blanket -fno-sanitize=all would cancel a caller's own request: only add it
  // when the caller asks for no sanitizer.
  if (!facts.caller_sanitizes) out.emplace_back("-fno-sanitize=all");
  if (!facts.warnings_are_errors)
    for (auto w : warnings_not_errors()) out.push_back("-Wno-error=" + std::string(w));
  // zig defines _DEBUG in its Debug mode (no -O); gcc never does. A caller's
  // own -D_DEBUG comes later and wins.
  out.emplace_back("-U_DEBUG");
  // zig defines NDEBUG in its release modes (any -O but -O0 and -Og), so through it assert() compiled to
  // nothing: pixman's test programs checked none of their assertions (and clang warned their variables
  // unused). gcc never defines it; a caller's own -DNDEBUG comes later and wins.
  out.emplace_back("-UNDEBUG");
  // gcc's default is -ftrapping-math (no transformation may raise an FP exception the source would not);
  // clang's is not: it vectorised pixman's guarded `f = (1 - da) / sa` into a divps of every lane, a SIGFPE
  // once its tests unmask FE_DIVBYZERO. clang's "maytrap" is gcc's -ftrapping-math. A caller's own FP choice
  // is left alone (clang warns on an override), and only where clang implements FP exceptions for the host
  // (x86-64, AArch64; RISC-V warns "unsupported").
  const auto host_arch = zig_arch(ctx.host);
  if (!facts.caller_fp && !facts.caller_target && (host_arch == "x86_64" || host_arch == "aarch64"))
    out.emplace_back("-ffp-exception-behavior=maytrap");
  // Debian's gcc (--enable-default-pie): code is PIE unless the caller picks
  // a model, and an executable is linked as a PIE unless -shared, -r,
  // -static, -no-pie (its specs: `%{static|shared|r:;!no-pie:-pie}`).
  if (!facts.caller_pic) out.emplace_back("-fPIE");
  if (facts.links && !facts.no_pie_link) out.emplace_back("-pie");

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
      if (linker.awaiting_value() && !a.starts_with("-") && !is_source_file(a)) {
        if (linker.take_value()) out.insert(out.end(), {"-Xlinker", a});
        continue;
      }
      out.push_back(a);
      continue;
    }
    switch (p.option->rule) {
      case Rule::pass:
      case Rule::library_dir:
      case Rule::target: as_given(); break;
      case Rule::drop:
        if (p.value_separate) ++i;
        break;
      case Rule::library: {
        const auto& v = p.value;
        if (v.starts_with(":") && v.size() > 1) {
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
      case Rule::linker: emit_linker(linker.filter(split(p.value, ',')), false); break;
      case Rule::linker_arg:
        if (p.value_separate) {
          emit_linker(linker.filter({p.value}), true);
          ++i;
        } else {
          out.push_back(a);
        }
        break;
      case Rule::preprocessor: translate_preprocessor_args(a, out); break;
    }
  }

  std::vector<std::string> asked_by_name;
  for (const auto& w : quiet_warnings()) {
    if (!asks_for(args, w)) {
      out.push_back("-Wno-" + std::string(w.name));
    } else if (w.name_asks) {
      for (const auto& a : args)
        if (a == "-W" + std::string(w.name) || a == "-Werror=" + std::string(w.name)) asked_by_name.push_back(a);
    }
  }
  // One asked for by name stays on past a -Wno- of a clang group holding it
  // (-Wno-strict-prototypes holds -Wdeprecated-non-prototype).
  out.insert(out.end(), asked_by_name.begin(), asked_by_name.end());
  if (glibc) {
    if (!facts.no_std_includes)
      for (const auto& dir : ctx.system_include_dirs) out.insert(out.end(), {"-idirafter", dir.string()});
    for (const auto* dirs : {&ctx.library_path, &ctx.system_library_dirs})
      for (const auto& dir : *dirs) out.push_back("-L" + dir.string());
  }
  return out;
}

}  // namespace provkit::ccshim
