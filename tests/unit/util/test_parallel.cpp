#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "provkit/util/parallel.hpp"

using namespace provkit;

TEST_CASE("ByteBudget: workers hold at most the cap together, and a request over the cap still ends", "[util]") {
  util::ByteBudget budget(100);
  std::atomic<std::uint64_t> held{0}, most{0};
  util::parallel_for(16, 16, [&](std::size_t i) {
    for (int step = 0; step < 3; ++step) {  // each grows in steps, as a header read does
      budget.acquire(i, 20);
      auto now = held += 20;
      for (auto m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {}
      std::this_thread::yield();
    }
    held -= 60;
    budget.release(i);
  });
  // Within the cap plus what the oldest holder holds (it is never made to wait).
  CHECK(budget.peak() <= 160);
  CHECK(most.load() <= 160);

  util::ByteBudget small(10);
  small.acquire(0, 50);  // alone: let through
  std::thread later([&] {
    small.acquire(1, 5);  // waits for 0 to release
    small.release(1);
  });
  small.acquire(0, 50);  // the oldest holder grows past the cap without waiting on 1
  small.release(0);
  later.join();
  CHECK(small.peak() == 100);
}
