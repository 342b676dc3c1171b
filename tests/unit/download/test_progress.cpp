// The numbers of hf-fetch's progress line (download::ProgressTally), with the clock given.
#include <catch2/catch.hpp>

#include "provkit/download/progress.hpp"

using provkit::download::ProgressTally;

TEST_CASE("progress: bytes done, rate, time left and the first file in flight", "[progress]") {
  ProgressTally t;
  auto t0 = ProgressTally::Clock::now();
  CHECK_FALSE(t.has_total());
  t.begin(1000, 2, t0);
  CHECK_FALSE(t.view(t0));     // nothing in flight
  t.start("a.bin", 600, 100);  // resumed: 100 bytes were there, not received now
  t.start("b.bin", 400, 0);
  t.progress("a.bin", 300);
  t.progress("b.bin", 100);
  auto v = t.view(t0 + std::chrono::seconds(1));
  REQUIRE(v);
  CHECK(v->file_number == 1);
  CHECK(v->files == 2);
  CHECK(v->path == "a.bin");
  CHECK(v->have == 300);
  CHECK(v->size == 600);
  CHECK(v->done == 400);
  CHECK(v->rate == Approx(300.0));                                // 200 + 100 received in one second
  CHECK(v->seconds_left == 2L);                                   // 600 left at 300/s
  CHECK(t.view(t0 + std::chrono::milliseconds(100))->rate == 0);  // too early to tell
  t.restart("a.bin");
  t.finish("b.bin", 400);
  v = t.view(t0 + std::chrono::seconds(1));
  CHECK(v->file_number == 2);
  CHECK(v->done == 400);
  t.finish("a.bin", 600);
  CHECK_FALSE(t.view(t0 + std::chrono::seconds(2)));
}

TEST_CASE("progress: the run's totals also between transfers (progress lines, an interruption's summary)",
          "[progress]") {
  ProgressTally t;
  auto t0 = ProgressTally::Clock::now();
  t.begin(1000, 2, t0);
  auto v = t.totals(t0);
  CHECK(v.files_done == 0);
  CHECK(v.files == 2);
  CHECK(v.done == 0);
  t.start("a.bin", 600, 0);
  t.progress("a.bin", 600);
  t.finish("a.bin", 600);
  CHECK_FALSE(t.view(t0 + std::chrono::seconds(2)));  // nothing in flight: no bar
  v = t.totals(t0 + std::chrono::seconds(2));
  CHECK(v.files_done == 1);
  CHECK(v.done == 600);
  CHECK(v.rate == Approx(300));
  REQUIRE(v.seconds_left);
  CHECK(*v.seconds_left == 1);
  CHECK(t.transferred() == 600);
}
