#pragma once
// cc-shim's argument translation: a gcc command line in, the `zig cc` command
// line out. A pure function of the arguments and a SearchContext that holds
// every fact it needs from the system, so unit tests can drive each rule
// (docs/cc-shim.md lists the rules and why each exists).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "provkit/elf.hpp"

namespace provkit::ccshim {

namespace fs = std::filesystem;

// What the translation may ask of the system.
struct SearchContext {
  // LIBRARY_PATH entries, in order.
  std::vector<fs::path> library_path;
  // Entries of /etc/ld.so.cache; called at most once, and only when an
  // `-l:NAME` is not found in the -L dirs or LIBRARY_PATH.
  std::function<std::vector<elf::CacheEntry>()> ld_so_cache;
  // The loader's default directories, multiarch ones included.
  std::vector<fs::path> default_dirs;
  // The ELF identity of the machine we compile on; the target's unless the
  // command line names another (-m32, -target, --target=).
  elf::Identity host;
  // ELF identity of a file; nullopt when it is missing or not an ELF.
  std::function<std::optional<elf::Identity>(const fs::path&)> probe;
  // Contents of a response file; nullopt when it cannot be read.
  std::function<std::optional<std::string>(const fs::path&)> read_response_file;
};

// The context of the running system: LIBRARY_PATH from the environment,
// /etc/ld.so.cache, elf::default_library_dirs(), elf::host_identity(),
// elf::read_identity, and plain file reads.
SearchContext system_context();

// Deepest response-file nesting followed before giving up (a cycle).
inline constexpr int max_response_file_depth = 32;

// Replaces each `@file` by the arguments in it, recursively (gcc's rules: a
// file that cannot be read leaves the argument as it is; quoting with '' and
// "" and backslash escapes as in libiberty's buildargv). Throws
// provkit::Error (usage) naming the file when nesting exceeds the limit.
std::vector<std::string> expand_response_files(const std::vector<std::string>& args, const SearchContext& ctx);

// The ELF class and machine the command line builds for: ctx.host unless
// -m32/-m64 or -target/--target= say otherwise.
elf::Identity target_identity(const std::vector<std::string>& args, const elf::Identity& host);

// The first `dir/name` among the -L dirs (`l_dirs`, command-line order), then
// LIBRARY_PATH, then ld.so.cache entries named `name`, then the default dirs,
// that is an ELF of the target's class and machine.
std::optional<fs::path> resolve_exact_library(const std::string& name, const std::vector<fs::path>& l_dirs,
                                              const elf::Identity& target, const SearchContext& ctx);

// The whole translation: response files expanded, then every rule applied.
// The result is what follows `zig cc` on the command line.
std::vector<std::string> translate(const std::vector<std::string>& args, const SearchContext& ctx);

// ---- Finding zig ----

struct ZigQuery {
  std::string cc_shim_zig;         // $CC_SHIM_ZIG (empty when unset)
  std::string path_env;            // $PATH
  std::vector<fs::path> shim_dirs;  // directories the shim was started from
  fs::path self_exe;               // the shim's own file, canonical
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

// True when argv[0]'s file name asks for C++ (c++, g++, *-g++, clang++...).
bool called_as_cxx(const std::string& argv0);

// Quotes an argument for a POSIX shell when it needs it (debug output).
std::string shell_quote(const std::string& arg);

}  // namespace provkit::ccshim
