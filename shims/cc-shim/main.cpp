// cc-shim: a gcc-compatible `cc` that replaces itself with `zig cc` (or
// `zig c++`) after translating the command line (provkit/ccshim.hpp).
// docs/cc-shim.md describes every option, translation and exit code.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "provkit/ccshim/ccshim.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"

namespace fs = std::filesystem;
using namespace provkit;

namespace {

constexpr int exit_usage = static_cast<int>(ExitCode::usage);

// Set in zig's environment before the exec; seeing it on entry means the zig
// we started ran us again (a zig that is really a wrapper around cc-shim).
constexpr const char* active_marker = "CC_SHIM_ACTIVE";

// stdio, not iostreams: <iostream>'s start-up work would be paid by every compile.
void print(std::FILE* to, const std::string& text) { std::fwrite(text.data(), 1, text.size(), to); }

int fail(const std::string& sentence, int code = exit_usage) {
  print(stderr, "cc-shim: " + sentence + "\n");
  return code;
}

ccshim::ZigSearch find_zig(const std::string& argv0) { return ccshim::locate_zig(ccshim::zig_query(argv0)); }

std::string not_found_sentence(const ccshim::ZigSearch& search) {
  std::string where;
  for (std::size_t i = 0; i < search.looked.size(); ++i) where += (i ? ", " : "") + search.looked[i];
  return "no zig found (looked at: " + where + "); install zig or set CC_SHIM_ZIG to its path";
}

// zig is to see the cache dirs the shim chose (ccshim::zig_cache_dirs).
ccshim::ZigCacheDirs ensure_cache_dirs() {
  auto dirs = ccshim::zig_cache_dirs();
  ::setenv("ZIG_GLOBAL_CACHE_DIR", dirs.global.c_str(), 1);
  ::setenv("ZIG_LOCAL_CACHE_DIR", dirs.local.c_str(), 1);
  return dirs;
}

int shim_info(const std::string& argv0, bool cxx, bool json) {
  auto search = find_zig(argv0);
  auto caches = ensure_cache_dirs();
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
    print(stdout, j.dump(2) + "\n");
    return search.zig ? 0 : exit_usage;
  }
  if (!search.zig) return fail(not_found_sentence(search));
  print(stdout, "zig: " + search.zig->string() + " (found via " + search.how + ")\n" +
                    "zig version: " + ccshim::zig_version(*search.zig) + "\n" + "mode: zig " + (cxx ? "c++" : "cc") + "\n" +
                    "global cache: " + caches.global + "\n" + "local cache: " + caches.local + "\n");
  return 0;
}

int install_links(const std::vector<std::string>& args) {
  if (args.size() != 2) return fail("usage: cc-shim install DIR");
  fs::path self = ccshim::self_exe();
  if (self.empty()) return fail("cannot tell where the cc-shim binary is (/proc/self/exe is unreadable)");
  try {
    ccshim::install_links(args[1], self);
  } catch (const Error& e) {
    return fail(e.what(), static_cast<int>(e.code()));
  }
  return 0;
}

const char* help_text =
    "cc-shim: a gcc-compatible C compiler backed by zig cc (docs/cc-shim.md)\n"
    "  cc-shim [--shim-cxx] ARGS...   compile like gcc; --shim-cxx (or a name ending in ++) runs zig c++\n"
    "  cc-shim --shim-info [--json]   which zig, its version and the cache directories\n"
    "  cc-shim --shim-version         cc-shim's own version (--version is zig's, as gcc --version is gcc's)\n"
    "  cc-shim install DIR            create cc, gcc, c++, g++ links to cc-shim in DIR\n"
    "environment: CC_SHIM_ZIG (zig to run), CC_SHIM_DEBUG=1 (print the zig command line),\n"
    "  ZIG_GLOBAL_CACHE_DIR / ZIG_LOCAL_CACHE_DIR (default: a per-user cache directory)\n";

}  // namespace

int main(int argc, char** argv) {
  std::string argv0 = argc > 0 ? argv[0] : "cc-shim";
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  bool cxx = ccshim::called_as_cxx(argv0);

  // zig runs `$CC` (else `cc`) with this set to find the native libc. Running
  // zig from here would loop back into zig's detection; failing makes zig use
  // its own libc, the same as on a host with no C compiler at all.
  if (std::getenv("ZIG_IS_DETECTING_LIBC_PATHS"))
    return fail("not answering zig's native libc detection (ZIG_IS_DETECTING_LIBC_PATHS is set); zig uses its own libc",
                static_cast<int>(ExitCode::check_failed));
  if (const char* zig = std::getenv(active_marker))
    return fail(std::string("called again from within the zig it started (") + zig +
                "); refusing to recurse: that zig runs cc-shim, point CC_SHIM_ZIG at a real zig");

  if (!args.empty() && args[0] == "--shim-cxx") {
    cxx = true;
    args.erase(args.begin());
  }
  if (!args.empty() && args[0] == "--shim-help") {
    print(stdout, help_text);
    return 0;
  }
  if (!args.empty() && args[0] == "--shim-version") {
    print(stdout, std::string("cc-shim (provkit) ") + PROVKIT_VERSION + "\n");
    return 0;
  }
  if (!args.empty() && args[0] == "--shim-info") {
    if (args.size() > 2 || (args.size() == 2 && args[1] != "--json")) return fail("usage: cc-shim --shim-info [--json]");
    return shim_info(argv0, cxx, args.size() == 2);
  }
  if (fs::path(argv0).filename() == "cc-shim" && !args.empty() && args[0] == "install") return install_links(args);

  std::vector<std::string> zig_args;
  std::optional<std::string> zig_libc;
  bool linker_version = false;
  auto search = ccshim::ZigSearch{};
  try {
    auto ctx = ccshim::system_context();
    // gcc's answers about itself that build systems probe (-dumpmachine):
    // the shim knows them without zig.
    if (auto answer = ccshim::answer_query(args, ctx)) {
      print(stdout, *answer);
      return 0;
    }
    search = find_zig(argv0);
    if (!search.zig) return fail(not_found_sentence(search));
    ctx.zig_newest_glibc = [zig = *search.zig] { return ccshim::newest_glibc_zig_builds(zig); };
    linker_version = ccshim::asks_linker_version(args, ctx);
    zig_args = ccshim::translate(args, ctx);
    // A libc file the caller gave zig stays theirs.
    if (util::getenv_str("ZIG_LIBC").empty()) zig_libc = ccshim::zig_libc_file(args, ctx);
  } catch (const Error& e) {
    return fail(e.what(), static_cast<int>(e.code()));
  } catch (const std::exception& e) {  // e.g. the working directory was removed
    return fail(e.what());
  }
  ensure_cache_dirs();
  if (linker_version) {
    // gcc -Wl,--version prints its linker's version and links nothing; zig cc
    // would print "zig ld 0.11.0", which names no linker meson knows. Its
    // linker is lld.
    zig_args = {search.zig->string(), "ld.lld", "--version"};
  } else {
    // A long command line goes to zig in a response file (exec refuses more
    // than ARG_MAX), a memfd zig reads as /proc/self/fd/N.
    std::string pack_error;
    zig_args = ccshim::pack_for_exec(zig_args, [&](const std::string& text) {
      auto path = ccshim::response_memfd(text);
      if (path.empty()) pack_error = std::strerror(errno);
      return path;
    });
    if (!pack_error.empty())
      return fail("cannot hold the " + std::to_string(args.size()) + " arguments for zig in a response file: " +
                  pack_error);
    // The host's C library for zig to link against, in a memfd as well.
    if (zig_libc) {
      auto path = ccshim::response_memfd(*zig_libc);
      if (path.empty()) return fail(std::string("cannot hold zig's libc file: ") + std::strerror(errno));
      ::setenv("ZIG_LIBC", path.c_str(), 1);
    }
    zig_args.insert(zig_args.begin(), {search.zig->string(), cxx ? "c++" : "cc"});
  }

  if (auto debug = util::getenv_str("CC_SHIM_DEBUG"); !debug.empty() && debug != "0") {
    std::string line = "cc-shim: exec";
    if (zig_libc) line += " ZIG_LIBC=" + ccshim::shell_quote(util::getenv_str("ZIG_LIBC"));
    for (const auto& a : zig_args) line += " " + ccshim::shell_quote(a);
    print(stderr, line + "\n");
    std::fflush(stderr);
  }

  ::setenv(active_marker, search.zig->c_str(), 1);
  std::vector<char*> cargv;
  for (auto& a : zig_args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ::execv(cargv[0], cargv.data());
  return fail("cannot run " + zig_args[0] + ": " + std::strerror(errno));
}
