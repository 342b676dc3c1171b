#pragma once
// The one way to touch files below a root the caller names (a cache, an
// environment, a local dir): every component below the root is opened
// relative to its parent's descriptor and never through a symbolic link,
// files are regular files where a file is expected (a FIFO or a device never
// blocks or feeds a read forever), and reads are bounded. Links planted in
// a shared cache or in someone else's env dir therefore cannot move a read
// or a write outside it. The root itself may be a link: the caller chose it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>

#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::util {

namespace fs = std::filesystem;

// How open_beneath resolves a path. automatic: openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS) where the kernel has it, else (ENOSYS, or EPERM from
// a seccomp filter) a walk of O_NOFOLLOW opens, one component at a time;
// PROVKIT_FS_RESOLVE=walk in the environment makes automatic walk (for the
// tests of the walk, and for kernels whose openat2 misbehaves).
enum class Resolver { automatic, openat2, walk };

// `relative` below the directory `root_fd`, opened with `flags` (O_CLOEXEC
// and O_NOFOLLOW added), never through a link in any component, never
// leaving the root (an absolute path or a ".." is refused with EXDEV).
// O_CREAT creates the last component only. Invalid Fd and errno on failure
// (ELOOP where a link was met).
Fd open_beneath(int root_fd, const fs::path& relative, int flags, mode_t mode = 0,
                Resolver resolver = Resolver::automatic);
// The same, for a file that must be a regular file: opened O_NONBLOCK (a
// FIFO's open never waits for a writer), checked with fstat (errno
// kNotRegularFile otherwise), O_NONBLOCK cleared again.
Fd open_regular_beneath(int root_fd, const fs::path& relative, int flags, mode_t mode = 0,
                        Resolver resolver = Resolver::automatic);
// Makes every missing directory of `relative` below `root_fd` (mkdirat, mode
// 0755 less the umask) and opens the last one (O_RDONLY, for fsync); a link
// or a non-directory on the way fails it (ELOOP / ENOTDIR). Always a walk:
// openat2 creates no directories. Invalid Fd and errno on failure.
Fd make_dirs_beneath(int root_fd, const fs::path& relative);

// The sentence for an errno of the functions above.
std::string describe_open_error(int err);

// A regular file opened by a path the user gave (links followed: the user
// named it), O_NONBLOCK while opening, fstat-checked. Invalid Fd and errno.
Fd open_regular(const fs::path& path, int flags = O_RDONLY);

// An output the user named that is no regular file (a FIFO, a device,
// /dev/stdout), opened for writing as it is: O_NONBLOCK while opening, so a
// FIFO that nothing reads fails at once (ENXIO) instead of waiting for a
// reader forever, then blocking again for the writes. Invalid Fd and errno.
Fd open_output_stream(const fs::path& path);

// A directory that files are opened below. The root is opened when first
// used (following links: the caller named it) and, for writers, created.
// Paths are spelt as the layouts build them, root / ...: they must lie
// lexically below the root (a relative path is taken from the working
// directory, as the root's own spelling is, never from the root). Errors throw
// provkit::Error (check_failed) naming the path and what was found.
class Root {
 public:
  Root() = default;
  explicit Root(fs::path dir) : dir_(std::move(dir)) {}
  Root(Root&& other) noexcept : dir_(std::move(other.dir_)), fd_(std::move(other.fd_)) {}
  Root& operator=(Root&& other) noexcept {
    dir_ = std::move(other.dir_);
    fd_ = std::move(other.fd_);
    return *this;
  }

  const fs::path& dir() const { return dir_; }
  bool empty() const { return dir_.empty(); }
  // The root's descriptor; `create` makes the directory first. -1 and errno when it cannot be opened.
  int fd(bool create = false) const;
  // `p` relative to the root; throws when it lies outside.
  fs::path relative(const fs::path& p) const;

  // Opens below the root (open_beneath); invalid Fd and errno on failure.
  Fd open(const fs::path& p, int flags, mode_t mode = 0) const;
  // Opens a regular file (open_regular_beneath); invalid Fd and errno on failure.
  Fd open_regular(const fs::path& p, int flags, mode_t mode = 0) const;
  // The directory `p`, created with its parents below the root; throws.
  Fd make_dirs(const fs::path& p) const;
  // p's parent directory, opened (and with `create`, made); throws on failure.
  Fd parent(const fs::path& p, bool create) const;
  // A regular file's bytes, at most max_bytes; throws (ENOENT included).
  std::string read(const fs::path& p, std::size_t max_bytes) const;
  // The same, but "" when there is no such file (anything else unusable still throws).
  std::string read_if_present(const fs::path& p, std::size_t max_bytes) const;
  // write_file_atomic below the root: parents made without links, the
  // temporary created O_EXCL beside the target, renamed over it (a link
  // planted at the target is replaced, never followed).
  void write_atomic(const fs::path& p, std::string_view content, fs::perms mode = fs::perms(0644),
                    Durability durability = Durability::power_loss) const;
  // Renames `from` to `to`, both below the root, without following a link
  // in any directory on the way; the target's directory is fsynced.
  // Throws naming both.
  void rename(const fs::path& from, const fs::path& to, bool durable = true) const;
  // Publishes the file `file_fd` is open on (the bytes that were hashed through it) at `to`, and removes
  // `from`, its name until now, if that still names it: linkat of the descriptor itself (/proc/self/fd)
  // where /proc and hard links are there, so bytes renamed onto `from` meanwhile are never published;
  // else the name is checked to be the descriptor's inode right before a rename. Both below the root, no
  // link followed on the way; throws naming both.
  void publish(int file_fd, const fs::path& from, const fs::path& to, bool durable = true) const;
  // Removes the file `p` (not a directory); false when it was not there.
  bool remove(const fs::path& p) const;
  // Removes the directory `p` when it is empty (a link is not followed); false when it was not removed
  // (not empty, not there, not a directory), never an error.
  bool remove_empty_directory(const fs::path& p) const;
  // Removes `p` and, when it is a directory, everything in it, every level opened below its parent's
  // descriptor: a link is removed as a link, never followed, so nothing outside the root goes. false when
  // `p` was not there; throws naming what could not be removed.
  bool remove_all(const fs::path& p) const;
  // lstat of `p` (fstatat AT_SYMLINK_NOFOLLOW in its parent): false and errno when absent or unreachable.
  bool stat(const fs::path& p, struct stat& st) const;

 private:
  fs::path dir_;
  mutable std::mutex mu_;
  mutable Fd fd_;
};

// Many files in few directories below one directory descriptor: each directory is opened (below the root,
// no link followed) once, then each file is one fstatat in it. For walks of thousands of files (a cache
// entry's tree) where Root::stat would open every parent path again. Not thread-safe: one per thread.
class DirectoryWalk {
 public:
  explicit DirectoryWalk(Fd top) : top_(std::move(top)) {}
  bool valid() const { return static_cast<bool>(top_); }
  // lstat of `relative` (below the top; no link followed on the way): false and errno when absent or
  // unreachable.
  bool stat(const fs::path& relative, struct stat& st);

 private:
  Fd top_;
  std::string last_dir_;
  Fd last_fd_;
};

// The nearest directory that every non-empty path of `paths` lies below
// (absolute, lexically normal): the root of a set of paths given without one.
fs::path common_directory(std::initializer_list<fs::path> paths);

// ---- the path rule ------------------------------------------------------------

// The one rule for a relative name that comes from outside (a Hub tree
// path, a manifest entry, a wheel's zip entry, an interpreter archive's
// entry) before it is joined to a root: valid UTF-8 of at most 4096 bytes,
// no control characters (C0, DEL, C1), line or paragraph separators, byte
// order marks or backslashes, not absolute, no empty, "." or ".." segment.
// `Trailing::slash_allowed`: one trailing '/' (a directory entry of an
// archive) is taken off first.
enum class Trailing { refused, slash_allowed };
bool is_safe_relative_path(std::string_view path, Trailing trailing = Trailing::refused);

// Whether `p` lies at or below `dir` once both are lexically normalised
// (no file-system access): the rule for paths a RECORD row or a link target
// reaches with "..". Relative `p` is taken relative to `dir`.
bool is_within(const fs::path& p, const fs::path& dir);

}  // namespace provkit::util
