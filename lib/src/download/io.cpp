#include "provkit/download/io.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::download {

void io_error(const fs::path& path, const std::string& what) {
  throw Error(ExitCode::check_failed, path.string() + ": " + what + ": " + std::strerror(errno));
}

void no_space(const fs::path& path, std::uint64_t still_needed) {
  throw Error(ExitCode::check_failed, path.string() + ": no space left on the device; " + std::to_string(still_needed) +
                                          " more bytes are needed for this file (what is there is kept, and a "
                                          "rerun resumes once there is room)");
}

void write_all(int fd, const char* data, std::size_t n, const fs::path& path) {
  if (int err = util::write_all(fd, data, n)) {
    errno = err;
    io_error(path, "write error");
  }
}

void pwrite_all(int fd, const char* data, std::size_t n, std::uint64_t offset, const fs::path& path,
                std::uint64_t still_needed) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      if (errno == ENOSPC || errno == EDQUOT) no_space(path, still_needed);
      io_error(path, "write error");
    }
    data += w;
    offset += static_cast<std::uint64_t>(w);
    n -= static_cast<std::size_t>(w);
  }
}

void preallocate(int fd, std::uint64_t size, const fs::path& path, std::uint64_t still_needed) {
  if (size == 0) return;
  int rc = ::fallocate(fd, 0, 0, static_cast<off_t>(size));
  if (rc == 0) return;
  if (errno == ENOSPC || errno == EDQUOT) no_space(path, still_needed);
  // File systems without fallocate: a sparse file of the full size.
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) io_error(path, "cannot extend");
}

void make_parent(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) throw Error(ExitCode::check_failed, p.parent_path().string() + ": cannot create directory: " + ec.message());
}

fs::path keep_aside(const fs::path& from, const fs::path& prefix, const std::string& sha256) {
  fs::path to = util::path_with_suffix(prefix, ".bad-" + sha256);
  make_parent(to);
  util::rename_durable(from, to);
  return to;
}

bool BlobLock::acquire(const fs::path& path, bool wait) {
  if (path.empty()) return true;
  make_parent(path);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) io_error(path, "cannot open lock file");
  int rc;
  while ((rc = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR) {
  }
  if (rc == 0) return true;
  int e = errno;
  release();
  if (e == EWOULDBLOCK) return false;
  errno = e;
  io_error(path, "cannot lock");
}

void BlobLock::release() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the flock
  fd_ = -1;
}

}  // namespace provkit::download
