#include "provkit/http_retry.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>

#include "http_text.hpp"

namespace provkit::http {

using detail::parse_u64;
using detail::trim;

std::optional<double> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  value = trim(value);
  std::uint64_t secs;
  if (parse_u64(value, secs)) return static_cast<double>(secs);
  // HTTP-date (IMF-fixdate): "Sun, 06 Nov 1994 08:49:37 GMT".
  std::tm tm{};
  std::string text(value);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  // In seconds, not as a time_point: a date centuries away (fuzzing found
  // "Sun, 06 Nov 1310 ...") would overflow system_clock's nanoseconds.
  double when = static_cast<double>(timegm(&tm));
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
