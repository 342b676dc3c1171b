#pragma once
// Small file-system helpers used everywhere a file must never be seen
// half-written: write to a temporary beside the target, fsync, rename.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace provkit::util {

namespace fs = std::filesystem;

// Reads a whole regular file (links followed: the caller named the path; a
// FIFO or device is refused without blocking), at most `max_bytes`; throws
// provkit::Error naming the path. Files below a cache, env or local dir are
// read through util::Root (beneath.hpp), which follows no link.
inline constexpr std::size_t kReadFileMax = 256u << 20;
std::string read_file(const fs::path& path, std::size_t max_bytes = kReadFileMax);
// At most `max_bytes` from the start of a regular file (all of it when
// shorter), by read_file's rules (links followed, a FIFO or device refused
// without blocking): for readers that need a head only, as of sysfs
// attributes, whose size the kernel reports as 4096 whatever they hold.
std::string read_file_head(const fs::path& path, std::size_t max_bytes);
// Exactly `n` bytes at offset `at` of a regular file (read_file's rules);
// throws naming the path when the file is shorter.
std::string read_file_range(const fs::path& path, std::uint64_t at, std::size_t n);

// Writes `content` to `target` atomically (temporary in the same directory,
// fsync, rename, fsync of the directory). Parent directories are created.
// Durability::process_crash skips both fsyncs: readers never see a torn file
// and a killed process loses nothing, but a power cut may lose the update
// (for frequent checkpoints whose loss only costs work).
enum class Durability { power_loss, process_crash };
void write_file_atomic(const fs::path& target, std::string_view content, fs::perms mode = fs::perms(0644),
                       Durability durability = Durability::power_loss);

// Renames `from` to `to` (same file system) and fsyncs the target directory,
// so the rename survives a crash.
void rename_durable(const fs::path& from, const fs::path& to);

// fsync a file or directory by path.
void fsync_path(const fs::path& path);

// `path` with `suffix` appended to its last component ("<path><suffix>"),
// the one place that derives a sibling's name (partial, sidecar, lock, stamp,
// temporary): when that would pass NAME_MAX (255 bytes), as a name a repo
// may legally have plus a suffix can, the component keeps a prefix of its
// name plus "~" and a 16-hex hash of it, so that it fits and stays the same
// from run to run.
fs::path path_with_suffix(const fs::path& path, std::string_view suffix);

// A unique temporary name beside `target`: "<target>.<tag>-<pid>-<counter>"
// (shortened as path_with_suffix does).
fs::path temp_path_beside(const fs::path& target, std::string_view tag = "tmp");

// The directory for per-user state: $XDG_CACHE_HOME, else $HOME/.cache,
// falling back to /tmp/provkit-<uid> when neither is writable.
fs::path user_cache_dir();

// This process's umask, read without changing it (/proc/self/status; where that has no Umask line, set and
// restored at once).
unsigned process_umask();

}  // namespace provkit::util
