#include "translate.hpp"

#include <algorithm>
#include <memory>
#include <string_view>

#include "libraries.hpp"
#include "options.hpp"
#include "provkit/util/strings.hpp"
#include "target.hpp"

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

}  // namespace

std::vector<std::string> translate(const Invocation& inv, const SearchContext& ctx) {
  const auto& args = inv.args;
  const auto target = target_identity(inv, ctx.host);
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
  const auto glibc = shim_glibc(inv, ctx);
  const auto arch = glibc ? zig_arch(ctx.host) : std::string();
  if (glibc && !arch.empty()) {
    out.insert(out.end(), {"-target", arch + "-linux-gnu." + *glibc});
    // gcc's CPU, the distribution's baseline, not this machine's: code built
    // for an AVX-512 host stopped json-c's tests under valgrind (SIGILL). No
    // -march for it: zig's name (x86_64) is not clang's (x86-64), and zig
    // hands stdin compiles (`cc -E -dM -`) to clang as they are.
    if (!inv.names_cpu && !zig_baseline_is_gccs(ctx.host)) out.emplace_back("-march=native");
  } else if (glibc) {
    out.insert(out.end(), {"-target", "native-native-gnu." + *glibc});
  }
  // zig turns UBSan traps on in debug builds; gcc does not. zig 0.11 consumes
  // `-fsanitize=undefined` itself and puts it ahead of pass-through flags, so a
  // blanket -fno-sanitize=all would cancel a caller's own request: only add it
  // when the caller asks for no sanitizer.
  if (!inv.sanitizes) out.emplace_back("-fno-sanitize=all");
  if (!inv.warnings_are_errors)
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
  if (!inv.chooses_fp && !inv.names_target && (host_arch == "x86_64" || host_arch == "aarch64"))
    out.emplace_back("-ffp-exception-behavior=maytrap");
  // Debian's gcc (--enable-default-pie): code is PIE unless the caller picks
  // a model, and an executable is linked as a PIE unless -shared, -r,
  // -static, -no-pie (its specs: `%{static|shared|r:;!no-pie:-pie}`).
  if (!inv.chooses_pic) out.emplace_back("-fPIE");
  if (inv.links() && !inv.no_pie_link) out.emplace_back("-pie");

  LinkerArgs linker;
  auto emit_linker = [&](const std::vector<std::string>& kept, bool as_xlinker) {
    if (kept.empty()) return;
    if (!as_xlinker) {
      out.push_back("-Wl," + join(kept, ','));
      return;
    }
    for (const auto& k : kept) out.insert(out.end(), {"-Xlinker", k});
  };

  for (const auto& p : inv.arguments) {
    const auto& a = p.given;
    // The spelling as given: one argument, or the option and its value.
    auto as_given = [&] {
      out.push_back(a);
      if (p.value_separate) out.push_back(p.value);
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
      case Rule::drop: break;
      case Rule::library: {
        const auto& v = p.value;
        if (v.starts_with(":") && v.size() > 1) {
          auto found = resolve_exact_library(v.substr(1), inv.l_dirs, target, search);
          if (found) {
            out.push_back(found->string());
          } else {
            as_given();  // the linker's own error, never the shim's guess
          }
        } else if (v == "gcc" || v == "gcc_eh") {
          // libgcc's role (compiler runtime, unwinder) is zig's compiler_rt and libunwind, always linked
        } else if (auto path = v.empty()
                                   ? std::nullopt
                                   : library_past_incompatible(v, inv.l_dirs, inv.static_link || linker.static_mode(),
                                                               target, search)) {
          out.push_back(path->string());
        } else {
          as_given();
        }
        break;
      }
      case Rule::undefined_symbol: out.push_back(p.value_separate ? "-Wl,-u," + p.value : a); break;
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
    if (!inv.no_std_includes)
      for (const auto& dir : ctx.system_include_dirs) out.insert(out.end(), {"-idirafter", dir.string()});
    for (const auto* dirs : {&ctx.library_path, &ctx.system_library_dirs})
      for (const auto& dir : *dirs) out.push_back("-L" + dir.string());
  }
  return out;
}

}  // namespace provkit::ccshim
