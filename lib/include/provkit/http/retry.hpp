#pragma once
// When to try again: the retry policy (which answers, how long between
// attempts) and the Retry-After header it honours.
#include <chrono>
#include <optional>
#include <string_view>

namespace provkit::http {

// Retry-After as seconds: either delta-seconds or an HTTP-date relative to `now`.
std::optional<double> parse_retry_after(std::string_view value,
                                        std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

struct RetryPolicy {
  int tries = 5;                   // attempts in all, the first included
  double backoff_base_s = 1.0;     // delay after the first failure; doubles each time
  double backoff_max_s = 8.0;      // cap of the exponential delay
  bool honour_retry_after = true;  // a server's Retry-After replaces the computed delay
  double retry_after_max_s = 300;  // but never more than this

  static bool retryable_status(long status);
  // Delay before attempt number `failed_attempts + 1` (failed_attempts >= 1).
  double delay_s(int failed_attempts, std::optional<double> retry_after = std::nullopt) const;
};

}  // namespace provkit::http
