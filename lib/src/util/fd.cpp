#include "provkit/util/fd.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "provkit/error.hpp"

namespace provkit::util {

FileRefusal file_refusal(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR: return FileRefusal::not_found;
    case ELOOP: return FileRefusal::link_in_the_way;
    case kNotRegularFile:
    case EISDIR:
    case ENXIO: return FileRefusal::not_regular;
    case EXDEV: return FileRefusal::outside_root;
    case EACCES:
    case EPERM:
    case EROFS: return FileRefusal::permission;
    case ENOSPC:
    case EDQUOT: return FileRefusal::no_space;
    default: return FileRefusal::io_error;
  }
}

std::string_view reason_name(FileRefusal) { return reason_name(Reason::check_failed); }
ExitCode exit_code(FileRefusal) { return ExitCode::check_failed; }

void Fd::reset(int fd) noexcept {
  if (fd_ >= 0 && fd_ != fd) {
    int saved = errno;
    ::close(fd_);
    errno = saved;
  }
  fd_ = fd;
}

int Fd::close() noexcept {
  if (fd_ < 0) return 0;
  int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0 ? 0 : errno;
}

int write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

std::uint64_t read_blocks(int fd, std::span<char> buffer, const std::function<void(const char*, std::size_t)>& sink,
                          const std::string& what) {
  std::uint64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(file_refusal(errno), what + ": read error: " + std::strerror(errno));
    }
    if (n == 0) return total;
    sink(buffer.data(), static_cast<std::size_t>(n));
    total += static_cast<std::uint64_t>(n);
  }
}

std::string read_bounded(int fd, std::size_t max_bytes, const std::string& what) {
  auto too_large = [&] {
    return Error(FileRefusal::too_large, what + ": larger than " + std::to_string(max_bytes) + " bytes; not read");
  };
  // A regular file says its size: one past the bound is refused before a byte is read, not after max_bytes.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    off_t here = ::lseek(fd, 0, SEEK_CUR);
    if (here >= 0 && st.st_size > here && static_cast<std::uint64_t>(st.st_size - here) > max_bytes) throw too_large();
  }
  std::string out;
  char buf[65536];
  for (;;) {
    // One byte past the bound tells "exactly max_bytes" from "more".
    std::size_t room = max_bytes - out.size() + 1;
    ssize_t n = ::read(fd, buf, room < sizeof buf ? room : sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(file_refusal(errno), what + ": read error: " + std::strerror(errno));
    }
    if (n == 0) return out;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes)
      throw too_large();  // it grew while it was read, or says no size (a pipe)
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string read_at(int fd, std::uint64_t at, std::size_t n, const std::string& what) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Error(file_refusal(errno), what + ": read error: " + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(got);
  return out;
}

}  // namespace provkit::util
