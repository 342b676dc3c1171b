// Bounds-checked reads from an open object file (object_file.hpp).
#include "provkit/elf/object_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "provkit/error.hpp"

namespace provkit::elf {

util::Fd detail::open_regular_file(const fs::path& path, std::string& why) {
  util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    why = std::string("cannot open: ") + std::strerror(errno);
    return fd;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    why = S_ISFIFO(st.st_mode)  ? "not a regular file (a FIFO)"
          : S_ISDIR(st.st_mode) ? "not a regular file (a directory)"
                                : "not a regular file";
    return util::Fd();
  }
  return fd;
}

ObjectFile::ObjectFile(const fs::path& path) : path_(path) {
  std::string why;
  fd_ = detail::open_regular_file(path, why);
  if (!fd_) fail(why);
  off_t end = ::lseek(fd_.get(), 0, SEEK_END);
  if (end < 0) fail("cannot read its size");
  size_ = static_cast<std::uint64_t>(end);
}

std::string ObjectFile::read(std::uint64_t offset, std::uint64_t length, const char* what) const {
  if (offset > size_ || length > size_ - offset) read_into(nullptr, offset, length, what);  // throws
  std::string buf(length, '\0');
  read_into(buf.data(), offset, length, what);
  return buf;
}

void ObjectFile::read_into(void* out, std::uint64_t offset, std::uint64_t length, const char* what) const {
  if (offset > size_ || length > size_ - offset)
    fail(std::string("truncated or malformed ELF: ") + what + " (" + std::to_string(length) + " bytes at offset " +
         std::to_string(offset) + ") lies beyond the end of the file (" + std::to_string(size_) + " bytes)");
  auto* p = static_cast<char*>(out);
  std::uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd_.get(), p + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::string("read error in ") + what);
    done += static_cast<std::uint64_t>(n);
  }
}

void ObjectFile::advise_random() const { ::posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_RANDOM); }

void ObjectFile::will_need(std::uint64_t offset, std::uint64_t length) const {
  if (offset >= size_) return;
  length = std::min(length, size_ - offset);
  ::posix_fadvise(fd_.get(), static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_WILLNEED);
}

void ObjectFile::fail(const std::string& why) const {
  throw Error(ExitCode::check_failed, path_.string() + ": " + why);
}

}  // namespace provkit::elf
