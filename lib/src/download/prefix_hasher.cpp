#include "prefix_hasher.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "io.hpp"
#include "provkit/error.hpp"

namespace provkit::download {

void PrefixHasher::start(int fd, const std::filesystem::path& path, const download::FileSpec& spec) {
  stop();
  fd_.reset(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!fd_) io_error(path, "cannot duplicate the descriptor of");
  path_ = path;
  hashes_.reset(spec);
  target_ = hashed_ = 0;
  stop_ = false;
  error_ = nullptr;
  worker_ = std::thread([this] { loop(); });
}

void PrefixHasher::stop() {
  if (worker_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  fd_.reset();
}

void PrefixHasher::advance(std::uint64_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  if (n <= target_) return;
  target_ = n;
  cv_.notify_all();
  cv_.wait(lock, [&] { return error_ || target_ - hashed_ <= kMaxLag; });
  if (error_) std::rethrow_exception(error_);
}

Hashes& PrefixHasher::finish(std::uint64_t n) {
  advance(n);
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return error_ || hashed_ >= n; });
  if (error_) std::rethrow_exception(error_);
  return hashes_;
}

void PrefixHasher::loop() {
  std::unique_ptr<char[]> buf(new char[kBlock]);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || target_ > hashed_; });
    if (stop_) return;
    std::uint64_t from = hashed_, to = std::min(target_, hashed_ + (8u << 20));
    lock.unlock();
    try {
      while (from < to) {
        std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, to - from));
        ssize_t n = ::pread(fd_.get(), buf.get(), want, static_cast<off_t>(from));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) io_error(path_, "read error");
        if (n == 0) throw Error(ExitCode::check_failed, path_.string() + ": shorter than the bytes written to it");
        hashes_.update(buf.get(), static_cast<std::size_t>(n));
        from += static_cast<std::uint64_t>(n);
      }
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
    lock.lock();
    hashed_ = to;
    cv_.notify_all();
  }
}

}  // namespace provkit::download
