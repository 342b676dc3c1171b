#pragma once
// cc-shim's side of running zig: finding it, asking its
// version, its cache directories, the links that make cc-shim the system's
// cc, and the spelling of a command line for debug output.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace provkit::ccshim {

namespace fs = std::filesystem;

struct ZigQuery {
  std::string cc_shim_zig;          // $CC_SHIM_ZIG (empty when unset)
  std::string path_env;             // $PATH
  std::vector<fs::path> shim_dirs;  // directories the shim was started from
  fs::path self_exe;                // the shim's own file, canonical
};

struct ZigSearch {
  std::optional<fs::path> zig;      // the zig to run
  std::string how;                  // "CC_SHIM_ZIG", "PATH", "ziglang package"
  std::vector<std::string> looked;  // each place tried, for the error sentence
};

// CC_SHIM_ZIG (when set, the only candidate), else `zig` in each PATH entry,
// else <shim dir>/../lib{,64}/python3*/site-packages/ziglang/zig. A candidate
// that is the shim itself is skipped, so the shim can never exec itself.
ZigSearch locate_zig(const ZigQuery& query);

// The query for the running shim: $CC_SHIM_ZIG, $PATH, the shim's own file
// (/proc/self/exe), and as shim dirs the directory it was called from (a
// venv's bin/ holding a link to the shim, when argv0 has a '/'), then the
// directory of its own file.
ZigQuery zig_query(const std::string& argv0);

// The shim's own file (/proc/self/exe); empty when it cannot be read.
fs::path self_exe();

// What `zig version` prints, without the line end; empty when it fails.
std::string zig_version(const fs::path& zig);

// The newest glibc release ("2.34") this zig can build stubs for: the last
// of the versions in its lib/libc/glibc/abilists (next to the binary, as the
// npm, pip and release archives ship it, or ../lib/zig as distributions
// install it; a link to zig is followed). nullopt when there is none or it is
// not in the format of zig 0.11 (a count of library names, the names, a count
// of versions, then major, minor, patch bytes each).
std::optional<std::string> newest_glibc_zig_builds(const fs::path& zig);

// ZIG_GLOBAL_CACHE_DIR and ZIG_LOCAL_CACHE_DIR as zig is to see them: zig's
// defaults live under $HOME, and a read-only home must not break compiles, so
// an unset global dir is one writable per-user directory (util::user_cache_dir()/
// provkit/zig) and an unset local dir is the global one.
struct ZigCacheDirs {
  std::string global, local;
};
ZigCacheDirs zig_cache_dirs();

// The names a build system calls the C and C++ compiler by.
inline constexpr const char* compiler_link_names[] = {"cc", "gcc", "c++", "g++"};

// Creates `dir` and in it compiler_link_names as symlinks to `self`. Names
// already linked to `self` are kept; any other file of such a name is an
// Error (usage) and then nothing is created. Throws Error (usage) naming the
// path when a directory or link cannot be made.
void install_links(const fs::path& dir, const fs::path& self);

// True when argv[0]'s file name asks for C++ (c++, g++, *-g++, clang++...).
bool called_as_cxx(const std::string& argv0);

// Quotes an argument for a POSIX shell when it needs it (debug output).
std::string shell_quote(const std::string& arg);

}  // namespace provkit::ccshim
