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
  // Whether a path is a regular file (the -lNAME candidates libNAME.so, libNAME.a).
  std::function<bool(const fs::path&)> is_regular_file;
  // Contents of a response file; nullopt when it cannot be read.
  std::function<std::optional<std::string>(const fs::path&)> read_response_file;
  // The host's glibc release ("2.36"), nullopt on a host without glibc.
  // Called at most once, and only when the command line names no target.
  std::function<std::optional<std::string>()> glibc_version;
  // Where gcc looks after the command line's own -I and -L dirs: the
  // multiarch-aware system header dirs and GNU ld's default search dirs
  // (those that exist). Handed to zig when the shim sets the target.
  std::vector<fs::path> system_include_dirs;
  std::vector<fs::path> system_library_dirs;
};

// The context of the running system: LIBRARY_PATH from the environment,
// /etc/ld.so.cache, elf::default_library_dirs(), elf::host_identity(),
// elf::read_identity, plain file reads, the glibc of the host's libc.so.6
// (elf::glibc_version) and the system dirs of its multiarch triple.
SearchContext system_context();

// Response files expanded in one command line before giving up, counting
// nested ones: gcc's (libiberty's) limit, which also ends a cycle or a
// fan-out of files that include each other.
inline constexpr int max_response_file_expansions = 2000;

// Replaces each `@file` by the arguments in it, recursively (gcc's rules: a
// file that cannot be read leaves the argument as it is; quoting with '' and
// "" and backslash escapes as in libiberty's buildargv). Throws
// provkit::Error (usage) naming the file when more than
// max_response_file_expansions files would be expanded.
std::vector<std::string> expand_response_files(const std::vector<std::string>& args, const SearchContext& ctx);

// The ELF class and machine the command line builds for: ctx.host unless
// -m32/-m64 or -target/--target= say otherwise.
elf::Identity target_identity(const std::vector<std::string>& args, const elf::Identity& host);

// The first `dir/name` among the -L dirs (`l_dirs`, command-line order), then
// LIBRARY_PATH, then ld.so.cache entries named `name`, then the default dirs,
// that is an ELF of the target's class and machine.
std::optional<fs::path> resolve_exact_library(const std::string& name, const std::vector<fs::path>& l_dirs,
                                              const elf::Identity& target, const SearchContext& ctx);

// For `-lNAME`: when the first libNAME.so / libNAME.a that zig would take
// (-L dirs, then LIBRARY_PATH, then ctx.system_library_dirs; only .a when
// `static_only`) is an ELF of another class or machine, the first one GNU ld
// would take instead (it skips "incompatible" files). nullopt when nothing is
// skipped (zig finds the same file) or nothing fits.
std::optional<fs::path> library_past_incompatible(const std::string& name, const std::vector<fs::path>& l_dirs,
                                                  bool static_only, const elf::Identity& target,
                                                  const SearchContext& ctx);

// The whole translation: response files expanded, then every rule applied.
// The result is what follows `zig cc` on the command line:
//   [-target native-native-gnu.<host glibc>] [-fno-sanitize=all]
//   [-Wno-error=... for clang errors that gcc only warns about]
//   translated arguments
//   [-Wno-... for clang's default warnings that gcc does not give]
//   [-idirafter <system include dirs>] [-L<LIBRARY_PATH and system library dirs>]
std::vector<std::string> translate(const std::vector<std::string>& args, const SearchContext& ctx);

// What gcc prints for a query the shim answers itself, without zig:
// `-dumpmachine` (the host's multiarch triple, "x86_64-linux-gnu") and
// `-print-multiarch` (the target's). nullopt when the command line is no such
// query, names its own target, or the host has no glibc (then zig answers).
std::optional<std::string> answer_query(const std::vector<std::string>& args, const SearchContext& ctx);

// Debian's multiarch triple for an ELF identity on a glibc host
// ("x86_64-linux-gnu", "i386-linux-gnu", "aarch64-linux-gnu"); empty when unknown.
std::string multiarch_triple(const elf::Identity& id);

// ---- Handing the arguments to zig ----

// Argument bytes above which they go to zig in a response file: below the
// 128 KiB that exec allows for one argument, and far below the total
// (ARG_MAX, a quarter of the stack limit, shared with the environment).
inline constexpr std::size_t max_inline_argument_bytes = 128 * 1024;

// An argument quoted for zig's response-file reader (std.process.ArgIteratorGeneral
// with single quotes: either quote toggles quoting, backslashes are literal
// except before a quote). nullopt for an argument it cannot carry: one with a
// single quote.
std::optional<std::string> quote_for_zig_response_file(const std::string& arg);

// The arguments as they are when they fit; otherwise runs of them written by
// `write_file` (given the text, returns a path zig can read) and replaced by
// `@path`. Arguments zig's reader cannot carry stay on the command line.
std::vector<std::string> pack_for_exec(const std::vector<std::string>& args,
                                       const std::function<std::string(const std::string&)>& write_file,
                                       std::size_t max_inline = max_inline_argument_bytes);

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
