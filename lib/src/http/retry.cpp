#include "provkit/http/retry.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "provkit/util/strings.hpp"

namespace provkit::http {

using util::parse_u64;
using util::trim_view;

std::optional<double> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  value = trim_view(value);
  std::uint64_t secs;
  if (parse_u64(value, secs)) return static_cast<double>(secs);
  // HTTP-date: curl's parser takes the three forms RFC 9110 5.6.7 asks a
  // recipient to accept (IMF-fixdate, RFC 850, asctime); -1 is no date.
  // Kept in seconds, not as a time_point: a date centuries away would
  // overflow system_clock's nanoseconds (fuzzing found that once).
  time_t when_t = curl_getdate(std::string(value).c_str(), nullptr);
  if (when_t == -1) return std::nullopt;
  double when = static_cast<double>(when_t);
  double delta = when - std::chrono::duration<double>(now.time_since_epoch()).count();
  return delta > 0 ? delta : 0.0;
}

bool RetryPolicy::retryable_status(long status) { return status == 408 || status == 429 || status >= 500; }

double RetryPolicy::delay_s(int failed_attempts, std::optional<double> retry_after) const {
  if (honour_retry_after && retry_after) return std::min(*retry_after, retry_after_max_s);
  double d = backoff_base_s * std::pow(2.0, std::max(0, failed_attempts - 1));
  return std::min(d, backoff_max_s);
}

}  // namespace provkit::http
