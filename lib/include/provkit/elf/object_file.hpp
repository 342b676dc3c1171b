#pragma once
// The one way provkit reads an object file: opened only when it is a regular
// file, and every range checked against the file's size before it is read, so
// a lying header is refused, never followed. The ELF reader (elf.hpp), its
// section table (sections.hpp) and the kernel listing (host/kernels) use it.
#include <cstdint>
#include <filesystem>
#include <string>

#include "provkit/util/fd.hpp"

namespace provkit::elf {

namespace fs = std::filesystem;

namespace detail {
// Opens `path` for reading only when it is a regular file. O_NONBLOCK keeps
// the open itself from waiting on a FIFO with no writer (or a device); fstat
// on the open descriptor then decides, so there is no stat-then-open race.
// An invalid Fd with `why` set otherwise.
util::Fd open_regular_file(const fs::path& path, std::string& why);
}  // namespace detail

class ObjectFile {
 public:
  // Throws provkit::Error (check_failed) "PATH: why" when it cannot be opened.
  explicit ObjectFile(const fs::path& path);
  ObjectFile(const ObjectFile&) = delete;
  ObjectFile& operator=(const ObjectFile&) = delete;

  const fs::path& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  // `length` bytes at `offset`; throws naming `what` when the range lies
  // beyond the end of the file or the read fails.
  std::string read(std::uint64_t offset, std::uint64_t length, const char* what) const;
  void read_into(void* out, std::uint64_t offset, std::uint64_t length, const char* what) const;
  // Says the reads will be scattered (headers far apart): no read-ahead.
  void advise_random() const;
  // Asks the kernel to start reading [offset, offset + length) into the page
  // cache now (POSIX_FADV_WILLNEED), for a read that comes later; returns at once.
  void will_need(std::uint64_t offset, std::uint64_t length) const;

  [[noreturn]] void fail(const std::string& why) const;

 private:
  fs::path path_;
  util::Fd fd_;
  std::uint64_t size_ = 0;
};

}  // namespace provkit::elf
