#pragma once
// Inside host (not installed): how long each step of a run took, in the
// trace (PROVKIT_LOG=debug / --debug), so a run on a real host shows where
// its milliseconds go: "host: inventory: driver (NVML and libcuda) 12.41 ms".
// Costs one clock read per step when no trace sink is installed.
#include <chrono>
#include <cstdio>
#include <string>

#include "provkit/util/log.hpp"

namespace provkit::host::detail {

class StepClock {
 public:
  explicit StepClock(std::string what) : what_(std::move(what)) {}
  // Traces the time since the last lap (or the start) as `step`'s.
  void lap(const char* step) {
    const auto now = std::chrono::steady_clock::now();
    util::log::debug("host", [&] {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.2f ms", std::chrono::duration<double, std::milli>(now - last_).count());
      return what_ + ": " + step + " " + ms;
    });
    last_ = now;
  }
  double total_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

}  // namespace provkit::host::detail
