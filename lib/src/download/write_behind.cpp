#include "write_behind.hpp"

#include <unistd.h>

#include <cerrno>

namespace provkit::download {

void WriteBehind::start(int fd) {
  finish();
  fd_ = fd;
  written_ = flushed_ = 0;
  stop_ = false;
  error_ = 0;
  worker_ = std::thread([this] { loop(); });
}

void WriteBehind::wrote(std::uint64_t n) {
  if (!worker_.joinable()) return;
  std::lock_guard lock(mu_);
  written_ += n;
  if (written_ - flushed_ >= kEvery) cv_.notify_one();
}

int WriteBehind::finish() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    worker_.join();
  }
  return error_;
}

void WriteBehind::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || written_ - flushed_ >= kEvery; });
    if (stop_) return;
    std::uint64_t upto = written_;
    lock.unlock();
    int rc;
    while ((rc = ::fdatasync(fd_)) != 0 && errno == EINTR) {}
    int err = rc == 0 ? 0 : errno;
    lock.lock();
    flushed_ = upto;
    if (err && !error_) error_ = err;
    if (error_) return;  // the first failure is the one to report
  }
}

}  // namespace provkit::download
