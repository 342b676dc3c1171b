#pragma once
// Runs fn(i) for i in [0, n) on up to `threads` threads. The first exception
// stops the handing out of new items and is rethrown after all threads join.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace provkit::util {

template <class F>
void parallel_for(std::size_t n, unsigned threads, F&& fn) {
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(n)));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (;;) {
      std::size_t i = next++;
      if (i >= n || failed) return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (error) std::rethrow_exception(error);
}

// A cap on the bytes that parallel workers hold at once (inspect's headers): a worker asks before it
// grows, and waits while the sum would pass the cap. The oldest holder (smallest `holder` id among those
// holding bytes; parallel_for hands ids out in order) is always let through, so a single request larger
// than the cap, or two workers growing at once, cannot wait on each other forever: the sum held stays
// within the cap plus what the oldest holder holds.
class ByteBudget {
 public:
  explicit ByteBudget(std::uint64_t cap) : cap_(cap) {}

  void acquire(std::size_t holder, std::uint64_t bytes) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock,
             [&] { return used_ + bytes <= cap_ || used_ == 0 || (!held_.empty() && held_.begin()->first == holder); });
    held_[holder] += bytes;
    used_ += bytes;
    peak_ = std::max(peak_, used_);
  }
  void release(std::size_t holder) {
    std::lock_guard lock(mutex_);
    auto it = held_.find(holder);
    if (it == held_.end()) return;
    used_ -= it->second;
    held_.erase(it);
    cv_.notify_all();
  }
  std::uint64_t peak() const {
    std::lock_guard lock(mutex_);
    return peak_;
  }

 private:
  std::uint64_t cap_, used_ = 0, peak_ = 0;
  std::map<std::size_t, std::uint64_t> held_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
};

// Worker count for I/O-bound work: a few more threads than cores.
inline unsigned default_jobs() {
  unsigned hc = std::thread::hardware_concurrency();
  return std::clamp(hc * 2, 4u, 32u);
}

// Worker count for CPU-bound work (inflate, hashing): one per core, so that the longest job started first
// keeps a whole core.
inline unsigned cpu_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace provkit::util
