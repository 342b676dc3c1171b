#pragma once
// How many connections each large file of a run uses, chosen by measurement:
// one to start with, doubled while the run's throughput rises with them (an
// origin that caps each connection shows flat per-connection rates: twice
// the connections, about twice the bytes), never past the ceiling
// (--connections). When a doubling does not pay, the count goes back to what
// it was and holds there; it is tried again after a while (1 s, then twice
// as long each time, at most 8 s), since origins change speed within a run.
// Against an origin that does not cap connections, more of them only
// scatter the writes and split the hash.
#include <chrono>
#include <cstdint>

namespace provkit::download {

class ConnectionRamp {
 public:
  using Clock = std::chrono::steady_clock;
  // Throughput is measured over windows this long, each after kSettle in
  // which nothing is counted (at the start and after a change: connections
  // still opening). Short, because the ramp's time runs below the ceiling.
  static constexpr auto kSettle = std::chrono::milliseconds(50);
  static constexpr auto kWindow = std::chrono::milliseconds(100);
  // What a doubling must bring to count as raising throughput (a per-connection cap gives about 2).
  static constexpr double kGain = 1.25;
  static constexpr auto kFirstHold = std::chrono::seconds(1);
  static constexpr auto kLongestHold = std::chrono::seconds(8);

  explicit ConnectionRamp(int ceiling);
  int allowed() const { return allowed_; }
  // At the ceiling: nothing more to measure.
  bool settled() const { return allowed_ >= ceiling_; }
  // The run has received `total` bytes by `now`. True when allowed() changed.
  bool observe(std::uint64_t total, Clock::time_point now);

 private:
  int ceiling_;
  int allowed_ = 1;
  int before_ = 0;  // the count before the doubling being measured (0: measuring the count itself)
  double rate_before_ = 0;
  bool started_ = false;
  bool settling_ = true;
  Clock::time_point window_start_{};
  std::uint64_t window_total_ = 0;
  Clock::time_point hold_until_{};
  Clock::duration hold_ = kFirstHold;
};

}  // namespace provkit::download
