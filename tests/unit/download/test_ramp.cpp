// The connection count chosen by measurement (issue 14).
#include <catch2/catch.hpp>

#include <functional>

#include "download/ramp.hpp"
#include "provkit/util/log.hpp"

using provkit::download::ConnectionRamp;

namespace {
// Feeds the ramp 10 ms steps of an origin whose throughput (bytes per second)
// is `rate(connections, seconds since the start)`, for `seconds`; returns the
// counts it allowed, in order.
std::vector<int> drive(ConnectionRamp& ramp, const std::function<double(int, double)>& rate, double seconds) {
  auto t = ConnectionRamp::Clock::time_point{} + std::chrono::hours(1);
  double total = 0;
  std::vector<int> seen{ramp.allowed()};
  for (int step = 0; step < seconds * 100; ++step) {
    total += rate(ramp.allowed(), step / 100.0) / 100;
    t += std::chrono::milliseconds(10);
    if (ramp.observe(static_cast<std::uint64_t>(total), t)) seen.push_back(ramp.allowed());
  }
  return seen;
}
double capped(int n, double) { return n * 50e6; }
}  // namespace

TEST_CASE("ramp: an origin that caps each connection gets the ceiling, doubling from one", "[ramp]") {
  ConnectionRamp ramp(8);
  auto seen = drive(ramp, capped, 3);
  CHECK(seen == std::vector<int>{1, 2, 4, 8});
  CHECK(ramp.settled());
}

TEST_CASE("ramp: the ceiling holds when it is not a power of two", "[ramp]") {
  ConnectionRamp ramp(6);
  CHECK(drive(ramp, capped, 3) == std::vector<int>{1, 2, 4, 6});
}

TEST_CASE("ramp: an origin that does not cap connections stays at one, tried again less and less often", "[ramp]") {
  ConnectionRamp ramp(8);
  // Tried at once, again after 1 s, then after 2 s (not yet within 3 s).
  CHECK(drive(
            ramp, [](int, double) { return 900e6; }, 3) == std::vector<int>{1, 2, 1, 2, 1});
  CHECK(ramp.allowed() == 1);
}

TEST_CASE("ramp: stops where more connections stop paying", "[ramp]") {
  ConnectionRamp ramp(16);  // the link holds 180 MB/s: 4 connections of 50 MB/s fill it
  auto seen = drive(
      ramp, [](int n, double) { return std::min(n * 50e6, 180e6); }, 2);
  CHECK(seen == std::vector<int>{1, 2, 4, 8, 4, 8, 4});
  CHECK(ramp.allowed() == 4);
}

TEST_CASE("ramp: an origin that starts to cap connections within the run is measured again", "[ramp]") {
  ConnectionRamp ramp(4);
  // Fast at first (the doubling looks useless), then 1 MB/s per connection.
  auto seen = drive(
      ramp, [](int n, double s) { return s < 0.25 ? 1e9 : n * 1e6; }, 3);
  CHECK(seen.back() == 4);
  CHECK(ramp.settled());
}

TEST_CASE("ramp: one connection as the ceiling is settled from the start", "[ramp]") {
  ConnectionRamp ramp(1);
  CHECK(ramp.settled());
  CHECK(drive(ramp, capped, 1) == std::vector<int>{1});
}

TEST_CASE("ramp: nothing changes before a window has been measured", "[ramp]") {
  ConnectionRamp ramp(8);
  CHECK(drive(ramp, capped, 0.12) == std::vector<int>{1});  // settling, then one window
}

TEST_CASE("ramp: each step is traced with the counts before and after and the rates that decided it", "[ramp]") {
  std::vector<std::string> lines;
  provkit::util::log::set_sink([&](std::string_view domain, std::string_view message) {
    lines.push_back(std::string(domain) + ": " + std::string(message));
  });
  struct Off {
    ~Off() { provkit::util::log::set_sink({}); }
  } off;
  ConnectionRamp ramp(4);
  // An origin that does not cap connections: the doubling is tried, does not pay, and is taken back.
  auto seen = drive(
      ramp, [](int, double) { return 50e6; }, 0.5);
  REQUIRE(seen == std::vector<int>{1, 2, 1});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "download: ramp: 1 -> 2 connections (50.0 MB/s with 1; trying more, at most 4)");
  CHECK(lines[1] ==
        "download: ramp: 2 -> 1 connections (50.0 MB/s with 2 is less than 1.25 times the 50.0 MB/s with 1; "
        "holding for 1000 ms)");
}
