#pragma once
// File descriptors: an owning Fd, and the raw reads and writes every file
// goes through (whole writes, block reads, reads bounded by a size the
// caller states).
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "provkit/error.hpp"

namespace provkit::util {

// errno of an open that found something other than a regular file where a
// file is expected (describe_open_error words it).
inline constexpr int kNotRegularFile = EMEDIUMTYPE;

// Why a file could not be opened, made or read (Error::is), from an errno or a bound: every one exit 1,
// `check_failed` in --json, as these failures always were.
enum class FileRefusal {
  not_found,        // ENOENT, ENOTDIR
  link_in_the_way,  // ELOOP: a link where none is followed
  not_regular,      // kNotRegularFile, EISDIR, ENXIO: a directory, FIFO, device or socket where a file is expected
  outside_root,     // EXDEV, or a path that lies outside the root it must be below
  permission,       // EACCES, EPERM, EROFS
  no_space,         // ENOSPC, EDQUOT
  too_large,        // larger than the bound it is read with
  short_file,       // the file ends before the range asked for
  io_error,         // any other errno (a read error, ...)
};
FileRefusal file_refusal(int err);
std::string_view reason_name(FileRefusal r);
ExitCode exit_code(FileRefusal r);

// Owns one descriptor: closed when it goes, moved, never copied.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes what it holds (errno kept as it was) and takes `fd`.
  void reset(int fd = -1) noexcept;
  // Closes now: 0, or the errno of close(2) (NFS reports some write errors only there).
  int close() noexcept;

 private:
  int fd_ = -1;
};

// Writes all `size` bytes to `fd`, resuming after short writes and EINTR.
// 0 when done, else the errno of the write that failed.
int write_all(int fd, const void* data, std::size_t size);
inline int write_all(int fd, std::string_view data) { return write_all(fd, data.data(), data.size()); }

// Reads `fd` to its end through `buffer`, handing each block read to `sink`
// (the one loop behind every hash-a-file); returns the bytes read. Throws
// Error (check_failed) "<what>: read error: <reason>".
std::uint64_t read_blocks(int fd, std::span<char> buffer, const std::function<void(const char*, std::size_t)>& sink,
                          const std::string& what);

// Reads `fd` from its offset to its end, refusing more than `max_bytes`:
// throws Error (check_failed) "<what>: larger than <max_bytes> bytes; not
// read" rather than grow without bound (a link to /dev/zero, a huge file).
std::string read_bounded(int fd, std::size_t max_bytes, const std::string& what);

// Up to `n` bytes at offset `at` of `fd` (pread, resuming after short reads
// and EINTR); fewer only where the file ends. Throws Error (check_failed)
// "<what>: read error: <reason>".
std::string read_at(int fd, std::uint64_t at, std::size_t n, const std::string& what);

}  // namespace provkit::util
