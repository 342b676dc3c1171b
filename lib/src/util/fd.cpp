#include "provkit/util/fd.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "provkit/error.hpp"

namespace provkit::util {

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
      throw Error(ExitCode::check_failed, what + ": read error: " + std::strerror(errno));
    }
    if (n == 0) return total;
    sink(buffer.data(), static_cast<std::size_t>(n));
    total += static_cast<std::uint64_t>(n);
  }
}

}  // namespace provkit::util
