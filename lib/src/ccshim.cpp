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

void expand_into(const std::vector<std::string>& args, const SearchContext& ctx, int depth,
                 const std::string& parent, std::vector<std::string>& out) {
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
    if (depth >= max_response_file_depth)
      throw input_error(parent.empty() ? file.string() : parent, 0,
                        "response files nested deeper than " + std::to_string(max_response_file_depth) +
                            " levels at " + arg + " (does a file include itself?)");
    expand_into(split_response_text(*text), ctx, depth + 1, file.string(), out);
  }
}

// ---- options that take their value as the next argument ----

// The next argument is a value, never an option of its own: copied verbatim so
// that e.g. `-Xlinker -u` or `-o -march=x` is not translated.
bool takes_separate_value(std::string_view a) {
  static constexpr std::array<std::string_view, 26> opts = {
      "-o",        "-x",       "-I",        "-D",       "-U",       "-include", "-imacros",
      "-isystem",  "-idirafter", "-iquote", "-isysroot", "--sysroot", "-target", "-MF",
      "-MT",       "-MQ",      "-Xlinker",  "-Xassembler", "-Xpreprocessor", "-Xclang", "-z",
      "-e",        "-T",       "-aux-info", "-arch",    "--param"};
  return std::find(opts.begin(), opts.end(), a) != opts.end();
}

// ---- linker options zig's `-Wl,` parser rejects ----

// Dropped because leaving them out does not change what the linked file does
// (diagnostics, link speed, layout, or what lld does anyway); see docs/cc-shim.md.
bool is_droppable_linker_flag(std::string_view t) {
  static constexpr std::array<std::string_view, 9> exact = {
      "-stats", "--stats", "--no-undefined-version", "--fatal-warnings", "--warn-common",
      "--enable-new-dtags", "-Bsymbolic-functions", "--no-add-needed", "--no-copy-dt-needed-entries"};
  static constexpr std::array<std::string_view, 6> prefixes = {
      "--threads", "--no-threads", "-plugin-opt", "--plugin-opt", "--icf=", "-rpath-link="};
  if (std::find(exact.begin(), exact.end(), t) != exact.end()) return true;
  if (starts_with(t, "--rpath-link=")) return true;
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return starts_with(t, p); });
}

bool is_droppable_z_keyword(std::string_view k) {
  static constexpr std::array<std::string_view, 5> keywords = {
      "separate-code", "noseparate-code", "combreloc", "pack-relative-relocs", "nopack-relative-relocs"};
  return std::find(keywords.begin(), keywords.end(), k) != keywords.end();
}

// `-Wl,a,b,c` with the droppable parts removed; nullopt when nothing is left.
std::optional<std::string> filter_linker_args(const std::string& arg) {
  auto tokens = split(std::string_view(arg).substr(4), ',');
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    bool has_next = i + 1 < tokens.size();
    if ((t == "-rpath-link" || t == "--rpath-link") && has_next) {
      ++i;  // and its directory
      continue;
    }
    if (t == "-z" && has_next && is_droppable_z_keyword(tokens[i + 1])) {
      ++i;
      continue;
    }
    if (starts_with(t, "-z") && t.size() > 2 && is_droppable_z_keyword(std::string_view(t).substr(2))) continue;
    if (is_droppable_linker_flag(t)) continue;
    kept.push_back(t);
    if (t == "-z" && has_next) kept.push_back(tokens[++i]);  // keep a -z pair together
  }
  if (kept.empty()) return std::nullopt;
  if (kept.size() == tokens.size()) return arg;
  return "-Wl," + join(kept, ',');
}

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

// gcc-only driver flags clang rejects ("Unknown Clang option") or warns about
// as unused, whose absence changes nothing in the output zig produces.
bool is_droppable_gcc_flag(std::string_view a) {
  static constexpr std::array<std::string_view, 10> exact = {
      "-fno-gnu-unique",   "-fvar-tracking",   "-fno-var-tracking",          "-fvar-tracking-assignments",
      "-fno-var-tracking-assignments", "-fipa-pta", "-fno-ipa-pta", "-static-libgcc", "-shared-libgcc",
      "-static-libstdc++"};
  if (std::find(exact.begin(), exact.end(), a) != exact.end()) return true;
  return starts_with(a, "-flto-partition=") || starts_with(a, "-fuse-ld=");
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
  expand_into(args, ctx, 0, "", out);
  return out;
}

elf::Identity target_identity(const std::vector<std::string>& args, const elf::Identity& host) {
  elf::Identity target = host;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    std::optional<elf::Identity> named;
    if (a == "-m32" && host.machine == EM_X86_64) {
      named = elf::Identity{ELFCLASS32, EM_386, ET_DYN};
    } else if (a == "-m64") {
      named = host;
    } else if (a == "-target" && i + 1 < args.size()) {
      named = identity_of_triple(args[++i]);
    } else if (starts_with(a, "--target=")) {
      named = identity_of_triple(std::string_view(a).substr(9));
    }
    if (named) target = *named;
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

std::vector<std::string> translate(const std::vector<std::string>& raw_args, const SearchContext& ctx) {
  const auto args = expand_response_files(raw_args, ctx);

  // Facts about the whole command line first: -L applies to every -l, wherever it stands.
  std::vector<fs::path> l_dirs;
  bool caller_sanitizes = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "-L" && i + 1 < args.size()) {
      l_dirs.emplace_back(args[++i]);
    } else if (starts_with(a, "-L") && a.size() > 2) {
      l_dirs.emplace_back(a.substr(2));
    } else if (starts_with(a, "-fsanitize=")) {
      caller_sanitizes = true;
    } else if (takes_separate_value(a)) {
      ++i;
    }
  }
  std::optional<elf::Identity> target;  // computed on the first -l:
  // ld.so.cache is read at most once, and only when an -l: gets that far.
  SearchContext search = ctx;
  auto cache = std::make_shared<std::optional<std::vector<elf::CacheEntry>>>();
  search.ld_so_cache = [cache, read = ctx.ld_so_cache] {
    if (!*cache) *cache = read ? read() : std::vector<elf::CacheEntry>{};
    return **cache;
  };

  std::vector<std::string> out;
  out.reserve(args.size() + 1);
  // zig turns UBSan traps on in debug builds; gcc does not. zig 0.11 consumes
  // `-fsanitize=undefined` itself and puts it ahead of pass-through flags, so a
  // blanket -fno-sanitize=all would cancel a caller's own request: only add it
  // when the caller asks for no sanitizer.
  if (!caller_sanitizes) out.push_back("-fno-sanitize=all");

  auto exact_library = [&](const std::string& name) -> std::optional<std::string> {
    if (!target) target = target_identity(args, ctx.host);
    auto found = resolve_exact_library(name, l_dirs, *target, search);
    if (!found) return std::nullopt;
    return found->string();
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    bool has_next = i + 1 < args.size();
    if (starts_with(a, "-l:") && a.size() > 3) {
      out.push_back(exact_library(a.substr(3)).value_or(a));
    } else if (a == "-l" && has_next && starts_with(args[i + 1], ":") && args[i + 1].size() > 1) {
      if (auto path = exact_library(args[i + 1].substr(1))) {
        out.push_back(*path);
      } else {
        out.insert(out.end(), {a, args[i + 1]});
      }
      ++i;
    } else if (a == "-u" && has_next) {
      out.push_back("-Wl,-u," + args[++i]);
    } else if (starts_with(a, "-march=") || starts_with(a, "-mcpu=")) {
      auto eq = a.find('=') + 1;
      out.push_back(a.substr(0, eq) + zig_cpu_name(std::string_view(a).substr(eq)));
    } else if (starts_with(a, "-mtune=")) {
      // dropped: gcc tunes scheduling only; zig takes it as the CPU to build for
    } else if (starts_with(a, "-Wl,")) {
      if (auto kept = filter_linker_args(a)) out.push_back(*kept);
    } else if (starts_with(a, "-Wp,")) {
      translate_preprocessor_args(a, out);
    } else if (is_droppable_gcc_flag(a)) {
      // dropped: see is_droppable_gcc_flag
    } else if (takes_separate_value(a) && has_next) {
      out.insert(out.end(), {a, args[++i]});
    } else {
      out.push_back(a);
    }
  }
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
  ctx.read_response_file = [](const fs::path& p) -> std::optional<std::string> {
    try {
      return read_file(p);
    } catch (const Error&) {
      return std::nullopt;
    }
  };
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
