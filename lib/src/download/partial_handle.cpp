#include "partial_handle.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::download {

std::uint64_t PartialHandle::open() {
  root_.parent(path_, true);
  fd_ = root_.open_regular(path_, O_RDWR | O_CREAT, 0644);
  if (!fd_) throw Error(ExitCode::check_failed, path_.string() + ": cannot open: " + util::describe_open_error(errno));
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) io_error(path_, "cannot stat");
  return static_cast<std::uint64_t>(st.st_size);
}

void PartialHandle::truncate(std::uint64_t length) {
  if (::ftruncate(fd_.get(), static_cast<off_t>(length)) != 0) io_error(path_, "cannot truncate");
}

void PartialHandle::close() {
  fd_.reset();
  lock_.release();
}

}  // namespace provkit::download
