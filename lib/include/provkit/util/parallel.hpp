#pragma once
// Runs fn(i) for i in [0, n) on up to `threads` threads. The first exception
// stops the handing out of new items and is rethrown after all threads join.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
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

// Worker count for I/O-bound work: a few more threads than cores.
inline unsigned default_jobs() {
  unsigned hc = std::thread::hardware_concurrency();
  return std::clamp(hc * 2, 4u, 32u);
}

}  // namespace provkit::util
