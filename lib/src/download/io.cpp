#include "io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "provkit/download/downloader.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::download {

void io_error(const fs::path& path, const std::string& what) {
  const int err = errno;
  throw Error(util::file_refusal(err), path.string() + ": " + what + ": " + std::strerror(err));
}

void no_space(const fs::path& path, std::uint64_t still_needed) {
  throw Error(util::FileRefusal::no_space, path.string() + ": no space left on the device; " +
                                               std::to_string(still_needed) +
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
  if (ec)
    throw Error(util::file_refusal(ec.value()),
                p.parent_path().string() + ": cannot create directory: " + ec.message());
}

fs::path job_root(const download::Job& job) {
  if (!job.root.empty()) return job.root;
  return util::common_directory(
      {job.final_path, job.partial_path, job.lock_path, job.verified_stamp, job.rejected_prefix});
}

fs::path keep_aside(const util::Root& root, const fs::path& from, const fs::path& prefix, const std::string& sha256) {
  fs::path to = util::path_with_suffix(prefix, ".bad-" + sha256);
  // One rejected copy per blob: a retry that is wrong again replaces the last one.
  remove_rejected(root, prefix);
  root.rename(from, to);
  return to;
}

void remove_rejected(const util::Root& root, const fs::path& prefix) {
  util::Fd dir = root.open(prefix.parent_path(), O_RDONLY | O_DIRECTORY);
  if (!dir) return;
  std::string lead = util::path_with_suffix(prefix, ".bad-").filename().string();
  DIR* d = ::fdopendir(::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0));
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (std::string_view(e->d_name).starts_with(lead)) names.emplace_back(e->d_name);
  ::closedir(d);
  for (const auto& n : names) ::unlinkat(dir.get(), n.c_str(), 0);
}

bool BlobLock::acquire(const util::Root& root, const fs::path& path, bool wait) {
  if (path.empty()) return true;
  root.parent(path, true);
  fd_ = root.open_regular(path, O_RDWR | O_CREAT, 0644);
  if (!fd_) {
    const int err = errno;
    throw Error(util::file_refusal(err), path.string() + ": cannot open lock file: " + util::describe_open_error(err));
  }
  int rc;
  while ((rc = ::flock(fd_.get(), LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR) {}
  if (rc == 0) return true;
  int e = errno;
  release();
  if (e == EWOULDBLOCK) return false;
  errno = e;
  io_error(path, "cannot lock");
}

}  // namespace provkit::download
