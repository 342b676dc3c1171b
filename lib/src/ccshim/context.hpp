#pragma once
// What cc-shim's translation may ask of the system:
// every fact it needs, in one struct, so unit tests can drive each rule.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "provkit/elf/elf.hpp"

namespace provkit::ccshim {

namespace fs = std::filesystem;

// The host's own C library development files, as a zig libc file names them.
struct HostLibc {
  fs::path include_dir;      // holds stdlib.h
  fs::path sys_include_dir;  // holds sys/errno.h (the multiarch dir)
  fs::path crt_dir;          // holds crt1.o, crti.o, crtn.o, libc.so
};

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
  // Contents of a response file; nullopt when it cannot be read. The
  // system's reads each file once (read_each_file_once): a pipe (`@<(...)`)
  // gives its bytes only once, and the run asks for them several times.
  std::function<std::optional<std::string>(const fs::path&)> read_response_file;
  // The host's glibc release ("2.36"), nullopt on a host without glibc.
  // Called at most once, and only when the command line names no target.
  std::function<std::optional<std::string>()> glibc_version;
  // The newest glibc release zig can build stubs for ("2.34"); nullopt when
  // unknown. Unset: not known.
  std::function<std::optional<std::string>()> zig_newest_glibc;
  // The host's libc development files (libc6-dev), when all are there: then
  // zig links against the host's real libc, as gcc does, not its stubs.
  std::optional<HostLibc> host_libc;
  // Where gcc looks after the command line's own -I and -L dirs: the
  // multiarch-aware system header dirs and GNU ld's default search dirs
  // (those that exist). Handed to zig when the shim sets the target.
  std::vector<fs::path> system_include_dirs;
  std::vector<fs::path> system_library_dirs;
};

using FileReader = std::function<std::optional<std::string>(const fs::path&)>;

// `read` memoised by path: the first answer for a path, read or not, is the
// answer for every later call in this process.
FileReader read_each_file_once(FileReader read);

// The glibc release ("2.39") of the libc.so.6 of `host`'s ABI found in
// `loader_dirs` (else through /etc/ld.so.cache): its highest GLIBC_2.N
// version definition. nullopt when there is none (a musl host).
std::optional<std::string> host_glibc_version(const elf::Identity& host, const std::vector<fs::path>& loader_dirs);

// The context of the running system: LIBRARY_PATH from the environment,
// /etc/ld.so.cache, elf::default_library_dirs(), elf::host_identity(),
// elf::read_identity, plain file reads, the glibc of the host's libc.so.6
// (elf::glibc_version, read once) and the system dirs of its multiarch triple
// and its libc development files. zig_newest_glibc is left unset (it needs
// the zig found: newest_glibc_zig_builds).
SearchContext system_context();

}  // namespace provkit::ccshim
