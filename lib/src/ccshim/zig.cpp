#include "provkit/ccshim/zig.hpp"

#include <algorithm>
#include <string_view>

#include "provkit/error.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/paths.hpp"
#include "provkit/util/process.hpp"

namespace provkit::ccshim {

namespace {

bool is_self(const fs::path& candidate, const fs::path& self_exe) {
  std::error_code ec;
  return !self_exe.empty() && fs::equivalent(candidate, self_exe, ec);
}

// An executable file that is not the shim itself (the shim must never exec itself).
bool is_usable_zig(const fs::path& zig, const fs::path& self_exe) {
  return util::is_executable_file(zig) && !is_self(zig, self_exe);
}

}  // namespace

ZigSearch locate_zig(const ZigQuery& q) {
  ZigSearch result;
  if (!q.cc_shim_zig.empty()) {
    fs::path zig = q.cc_shim_zig;
    if (!util::is_executable_file(zig)) {
      result.looked.push_back("CC_SHIM_ZIG=" + q.cc_shim_zig + " (not an executable file)");
    } else if (is_self(zig, q.self_exe)) {
      result.looked.push_back("CC_SHIM_ZIG=" + q.cc_shim_zig + " (that is cc-shim itself)");
    } else {
      result.zig = zig;
      result.how = "CC_SHIM_ZIG";
    }
    return result;  // an explicit choice is the only candidate
  }

  // An empty PATH entry is the current directory, as execvp reads it.
  for (const auto& entry : util::split_path_list(q.path_env, util::EmptyEntry::current_dir)) {
    fs::path zig = fs::path(entry) / "zig";
    if (is_usable_zig(zig, q.self_exe)) {
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
        if (e.path().filename().string().starts_with("python3")) pythons.push_back(e.path());
      }
      std::sort(pythons.begin(), pythons.end());  // deterministic when a venv has several
      for (const auto& py : pythons) {
        fs::path zig = py / "site-packages" / "ziglang" / "zig";
        if (is_usable_zig(zig, q.self_exe)) {
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

fs::path self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

ZigQuery zig_query(const std::string& argv0) {
  ZigQuery q;
  q.cc_shim_zig = util::env_value(util::EnvVar::cc_shim_zig);
  q.path_env = util::env_value(util::EnvVar::path);
  q.self_exe = self_exe();
  std::error_code ec;
  if (auto called = fs::absolute(argv0, ec); !ec && argv0.find('/') != std::string::npos)
    q.shim_dirs.push_back(called.parent_path());
  if (!q.self_exe.empty() && (q.shim_dirs.empty() || q.shim_dirs[0] != q.self_exe.parent_path()))
    q.shim_dirs.push_back(q.self_exe.parent_path());
  return q;
}

std::string zig_version(const fs::path& zig) {
  util::RunOptions options;
  options.stderr_to = util::StderrTo::discard;
  auto r = util::run({zig.string(), "version"}, options);
  auto& out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::optional<std::string> newest_glibc_zig_builds(const fs::path& zig) {
  std::error_code ec;
  auto bin = fs::canonical(zig, ec);
  if (ec) return std::nullopt;
  for (const auto& lib : {bin.parent_path() / "lib", bin.parent_path() / ".." / "lib" / "zig"}) {
    const auto abilists = lib / "libc" / "glibc" / "abilists";
    if (!fs::is_regular_file(abilists, ec)) continue;
    std::string data;
    try {
      data = util::read_file(abilists);
    } catch (const Error&) {
      return std::nullopt;
    }
    std::size_t at = 0;
    auto byte = [&]() -> std::optional<unsigned> {
      if (at >= data.size()) return std::nullopt;
      return static_cast<unsigned char>(data[at++]);
    };
    auto libs = byte();
    if (!libs) return std::nullopt;
    for (unsigned i = 0; i < *libs; ++i) {
      auto end = data.find('\0', at);
      if (end == std::string::npos) return std::nullopt;
      at = end + 1;
    }
    auto versions = byte();
    if (!versions || *versions == 0 || data.size() - at < std::size_t{3} * *versions) return std::nullopt;
    std::pair<unsigned, unsigned> newest{0, 0};
    for (unsigned i = 0; i < *versions; ++i) {
      unsigned major = *byte(), minor = *byte();
      byte();  // patch
      newest = std::max(newest, std::pair{major, minor});
    }
    return std::to_string(newest.first) + "." + std::to_string(newest.second);
  }
  return std::nullopt;
}

ZigCacheDirs zig_cache_dirs() {
  ZigCacheDirs dirs{util::env_value(util::EnvVar::zig_global_cache_dir),
                    util::env_value(util::EnvVar::zig_local_cache_dir)};
  if (dirs.global.empty()) dirs.global = (util::user_cache_dir() / "provkit" / "zig").string();
  if (dirs.local.empty()) dirs.local = dirs.global;
  return dirs;
}

void install_links(const fs::path& dir, const fs::path& self) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ExitCode::usage, dir.string() + ": cannot create directory: " + ec.message());
  // Check all of them first so a conflict leaves `dir` as it was.
  std::vector<fs::path> to_create;
  for (const char* name : compiler_link_names) {
    fs::path link = dir / name;
    auto st = fs::symlink_status(link, ec);
    if (!fs::exists(st)) {
      to_create.push_back(link);
    } else if (!(fs::is_symlink(st) && fs::equivalent(link, self, ec))) {
      throw Error(ExitCode::usage, link.string() + " already exists and is not a link to cc-shim; remove it first");
    }
  }
  for (const auto& link : to_create) {
    fs::create_symlink(self, link, ec);
    if (ec) throw Error(ExitCode::usage, link.string() + ": cannot create link: " + ec.message());
  }
}

bool called_as_cxx(const std::string& argv0) {
  auto name = fs::path(argv0).filename().string();
  return name.size() >= 2 && name.compare(name.size() - 2, 2, "++") == 0;
}

std::string shell_quote(const std::string& arg) {
  static constexpr std::string_view safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
  if (!arg.empty() && arg.find_first_not_of(safe) == std::string::npos) return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

}  // namespace provkit::ccshim
