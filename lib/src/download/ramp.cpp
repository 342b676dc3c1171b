#include "provkit/download/ramp.hpp"

#include <algorithm>

namespace provkit::download {

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
    allowed_ = before_;
    before_ = 0;
    hold_until_ = now + hold_;
    hold_ = std::min<Clock::duration>(hold_ * 2, kLongestHold);
    return true;
  }
  before_ = allowed_;
  rate_before_ = rate;
  allowed_ = std::min(ceiling_, allowed_ * 2);
  return true;
}

}  // namespace provkit::download
