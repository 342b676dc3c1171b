#include "ramp.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "provkit/util/log.hpp"

namespace provkit::download {

namespace {
std::string rate_text(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB/s", bytes_per_s / 1e6);
  return buf;
}
std::string factor_text(double f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", f);
  return buf;
}
}  // namespace

ConnectionRamp::ConnectionRamp(int ceiling) : ceiling_(std::max(1, ceiling)) {}

bool ConnectionRamp::observe(std::uint64_t total, Clock::time_point now) {
  if (settled()) return false;
  if (!started_ || now < hold_until_) {  // a window starts once the hold is over
    started_ = true;
    window_start_ = now;
    window_total_ = total;
    return false;
  }
  auto elapsed = now - window_start_;
  if (elapsed < (settling_ ? std::chrono::duration_cast<Clock::duration>(kSettle) : kWindow)) return false;
  double rate = static_cast<double>(total - window_total_) / std::chrono::duration<double>(elapsed).count();
  window_start_ = now;
  window_total_ = total;
  if (settling_) {
    settling_ = false;
    return false;
  }
  settling_ = true;
  if (before_ > 0 && rate < rate_before_ * kGain) {  // the doubling did not pay: back, and hold
    util::log::debug("download", [&] {
      return "ramp: " + std::to_string(allowed_) + " -> " + std::to_string(before_) + " connections (" +
             rate_text(rate) + " with " + std::to_string(allowed_) + " is less than " + factor_text(kGain) +
             " times the " + rate_text(rate_before_) + " with " + std::to_string(before_) + "; holding for " +
             std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(hold_).count()) + " ms)";
    });
    allowed_ = before_;
    before_ = 0;
    hold_until_ = now + hold_;
    hold_ = std::min<Clock::duration>(hold_ * 2, kLongestHold);
    return true;
  }
  before_ = allowed_;
  rate_before_ = rate;
  allowed_ = std::min(ceiling_, allowed_ * 2);
  util::log::debug("download", [&] {
    return "ramp: " + std::to_string(before_) + " -> " + std::to_string(allowed_) + " connections (" + rate_text(rate) +
           " with " + std::to_string(before_) + "; trying more, at most " + std::to_string(ceiling_) + ")";
  });
  return true;
}

}  // namespace provkit::download
