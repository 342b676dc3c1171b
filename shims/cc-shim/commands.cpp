// cc-shim's own options (commands.hpp). No iostreams here: every compile pays the shim's start-up.
#include "commands.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "provkit/ccshim/supervise.hpp"
#include "provkit/ccshim/zig.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/process.hpp"

namespace ccshim_tool {

namespace {

namespace ccshim = provkit::ccshim;
namespace fs = std::filesystem;
using ccshim::Reply;
using provkit::Error;
namespace util = provkit::util;

constexpr int exit_usage = static_cast<int>(provkit::ExitCode::usage);

Reply fail(const std::string& sentence, int code = exit_usage) { return {code, "", "cc-shim: " + sentence + "\n"}; }

// The zig cache directories and install_links are the library's (ccshim/zig.hpp); the words are here.
Reply shim_info(const std::string& argv0, bool cxx, bool json) {
  auto search = ccshim::locate_zig(ccshim::zig_query(argv0));
  // zig (its version, below) is to see the cache dirs the shim chose.
  auto caches = ccshim::zig_cache_dirs();
  ::setenv("ZIG_GLOBAL_CACHE_DIR", caches.global.c_str(), 1);
  ::setenv("ZIG_LOCAL_CACHE_DIR", caches.local.c_str(), 1);
  if (json) {
    nlohmann::json j;
    j["mode"] = cxx ? "c++" : "cc";
    j["global_cache"] = caches.global;
    j["local_cache"] = caches.local;
    if (search.zig) {
      j["zig"] = search.zig->string();
      j["found_via"] = search.how;
      j["version"] = ccshim::zig_version(*search.zig);
    } else {
      j["zig"] = nullptr;
      j["looked"] = search.looked;
    }
    return {search.zig ? 0 : exit_usage, j.dump(2) + "\n", ""};
  }
  if (!search.zig) return ccshim::zig_not_found(search);
  return {0,
          "zig: " + search.zig->string() + " (found via " + search.how + ")\n" +
              "zig version: " + ccshim::zig_version(*search.zig) + "\n" + "mode: zig " + (cxx ? "c++" : "cc") + "\n" +
              "global cache: " + caches.global + "\n" + "local cache: " + caches.local + "\n",
          ""};
}

Reply install(const std::vector<std::string>& args) {
  if (args.size() != 2) return fail("usage: cc-shim install DIR");
  fs::path self = ccshim::self_exe();
  if (self.empty()) return fail("cannot tell where the cc-shim binary is (/proc/self/exe is unreadable)");
  try {
    ccshim::install_links(args[1], self);
  } catch (const Error& e) {
    return fail(e.what(), static_cast<int>(e.code()));
  }
  return {};
}

// What zig builds once per global cache and mode, built now: the first C++ link in a fresh cache builds
// libc++ and libc++abi (CMake's first C++ configure of expat took 101.8 s, gcc's 3.2 s). Each build goes
// through the shim itself, so exactly the shim's flags are warmed.
Reply warm(bool json) {
  auto self = ccshim::self_exe();
  if (self.empty()) return fail("cannot tell where the cc-shim binary is (/proc/self/exe is unreadable)");
  auto caches = ccshim::zig_cache_dirs();
  std::string dir;
  try {
    dir = ccshim::make_scratch_dir((fs::path(caches.global) / "cc-shim-runs").string());
  } catch (const Error& e) {
    return fail(e.what(), static_cast<int>(e.code()));
  }
  struct Remove {
    std::string d;
    ~Remove() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } remove{dir};
  const auto c = (fs::path(dir) / "warm.c").string(), cxx = (fs::path(dir) / "warm.cpp").string();
  try {
    util::write_file_atomic(c, "#include <stdio.h>\nint main(void) { puts(\"warm\"); return 0; }\n");
    util::write_file_atomic(
        cxx,
        "#include <iostream>\n#include <string>\nint main() { std::cout << std::string(\"warm\") << std::endl; }\n");
  } catch (const Error& e) {
    return fail(e.what(), static_cast<int>(e.code()));
  }
  // The modes zig builds its runtime for separately: debug (no -O: configure probes, CMake's checks),
  // optimised, and position-independent shared objects; and for the optimised two, a link of objects apart
  // from one that also compiles a source (a project's build links objects compiled before; zig then builds
  // its runtime again, as another cache entry: expat's first build with a warmed cache did).
  const auto o = (fs::path(dir) / "warm.o").string();
  struct Build {
    const char* what;
    std::vector<std::vector<std::string>> steps;  // the last one writes warm.out
  };
  const std::vector<Build> builds = {
      {"C", {{c}}},
      {"C -O2", {{"-O2", c}}},
      {"C -shared -fPIC", {{"-shared", "-fPIC", "-O2", c}}},
      {"C -O2, objects linked", {{"-O2", "-c", c, "-o", o}, {"-O2", o}}},
      {"C -shared -fPIC, objects linked", {{"-fPIC", "-O2", "-c", c, "-o", o}, {"-shared", "-O2", o}}},
      {"C++", {{"--shim-cxx", cxx}}},
      {"C++ -O2", {{"--shim-cxx", "-O2", cxx}}},
      {"C++ -shared -fPIC", {{"--shim-cxx", "-shared", "-fPIC", "-O2", cxx}}},
      {"C++ -O2, objects linked", {{"--shim-cxx", "-O2", "-c", cxx, "-o", o}, {"--shim-cxx", "-O2", o}}},
      {"C++ -shared -fPIC, objects linked",
       {{"--shim-cxx", "-fPIC", "-O2", "-c", cxx, "-o", o}, {"--shim-cxx", "-shared", "-O2", o}}},
  };
  nlohmann::json j = nlohmann::json::array();
  std::string text;
  for (const auto& b : builds) {
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < b.steps.size(); ++i) {
      std::vector<std::string> argv{self.string()};
      argv.insert(argv.end(), b.steps[i].begin(), b.steps[i].end());
      if (i + 1 == b.steps.size()) argv.insert(argv.end(), {"-o", (fs::path(dir) / "warm.out").string()});
      auto r = util::run(argv);
      if (util::shell_status(r) != 0)
        return fail(std::string("warming zig's cache failed at the ") + b.what + " build: " + r.output + r.start_error);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", s);
    text += std::string("  ") + b.what + ": " + secs + " s\n";
    j.push_back({{"build", b.what}, {"seconds", s}});
  }
  if (json) return {0, nlohmann::json{{"global_cache", caches.global}, {"builds", j}}.dump(2) + "\n", ""};
  return {0, "zig's cache " + caches.global + " is warm for cc-shim:\n" + text, ""};
}

constexpr const char* help_text =
    "cc-shim: a gcc-compatible C compiler backed by zig cc (docs/cc-shim.md)\n"
    "  cc-shim [--shim-cxx] ARGS...   compile like gcc; --shim-cxx (or a name ending in ++) runs zig c++\n"
    "  cc-shim --shim-info [--json]   which zig, its version and the cache directories\n"
    "  cc-shim --shim-warm [--json]   build now what zig builds on first use (libc++ for C++: minutes)\n"
    "  cc-shim --shim-version         cc-shim's own version (--version is zig's, as gcc --version is gcc's)\n"
    "  cc-shim install DIR            create cc, gcc, c++, g++ links to cc-shim in DIR\n"
    "environment: CC_SHIM_ZIG (zig to run), CC_SHIM_DEBUG=1 (print the zig command line),\n"
    "  ZIG_GLOBAL_CACHE_DIR / ZIG_LOCAL_CACHE_DIR (default: a per-user cache directory)\n";

}  // namespace

std::optional<Reply> own_option(const std::vector<std::string>& args, const std::string& argv0, bool cxx) {
  if (args.empty()) return std::nullopt;
  if (args[0] == "--shim-help") return Reply{0, help_text, ""};
  if (args[0] == "--shim-version") return Reply{0, std::string("cc-shim (provkit) ") + PROVKIT_VERSION + "\n", ""};
  if (args[0] == "--shim-warm") {
    if (args.size() > 2 || (args.size() == 2 && args[1] != "--json"))
      return fail("usage: cc-shim --shim-warm [--json]");
    return warm(args.size() == 2);
  }
  if (args[0] == "--shim-info") {
    if (args.size() > 2 || (args.size() == 2 && args[1] != "--json"))
      return fail("usage: cc-shim --shim-info [--json]");
    return shim_info(argv0, cxx, args.size() == 2);
  }
  if (fs::path(argv0).filename() == "cc-shim" && args[0] == "install") return install(args);
  return std::nullopt;
}

}  // namespace ccshim_tool
