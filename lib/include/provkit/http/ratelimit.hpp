#pragma once
// Politeness: what servers say of their rate limits (RateLimit and
// RateLimit-Policy headers), the pacer that spaces requests to an origin
// accordingly, and the token bucket behind Options::max_bytes_per_s.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace provkit::http {

// What a server says of its rate limit, from `RateLimit` (IETF draft:
// `"resolvers";r=12;t=172`, several comma-separated; or the older
// `limit=100, remaining=12, reset=172`) and `RateLimit-Policy` (`"fixed
// window";"resolvers";q=3000;w=300` as the Hub sends it, or `"api";q=500;w=300`).
struct RateLimitState {
  std::uint64_t remaining = 0;         // requests left in the window
  double reset_s = 0;                  // seconds until the window resets
  std::optional<std::uint64_t> quota;  // requests per window, when known
};
// The most restrictive limit the headers name (the longest wait it asks for), or
// nullopt when `ratelimit` holds no remaining count and reset.
std::optional<RateLimitState> parse_ratelimit(std::string_view ratelimit, std::string_view policy = {});

// How long to wait before a new request to an origin that sent `state`:
// 0 requests left: until the reset; few left (at most 10% of the quota, or
// fewer than 10 without one): reset / remaining apart; otherwise no wait (0).
double ratelimit_spacing_s(const RateLimitState& state);

// Pacing asked for by servers through RateLimit headers, per origin
// ("scheme://host:port"). Sessions share one process-wide instance, so that
// what the tree listing was told also holds for the downloads after it.
class RateLimitPacer {
 public:
  using Clock = std::chrono::steady_clock;
  // A response from `origin` carried `state` (waits capped at max_wait_s).
  void observe(const std::string& origin, const RateLimitState& state, Clock::time_point now, double max_wait_s);
  // Whether a request to `origin` may start now: nullopt (and the start is
  // recorded) or the earliest time it may.
  std::optional<Clock::time_point> try_start(const std::string& origin, Clock::time_point now);

 private:
  struct Origin {
    Clock::time_point next_start{};  // no request before this
    Clock::time_point last_start{};
    double spacing_s = 0;               // between request starts ...
    Clock::time_point spacing_until{};  // ... until the window resets
  };
  std::vector<std::pair<std::string, Origin>> origins_;
  Origin& at(const std::string& origin);
};

// A token bucket for bytes: `rate` per second, at most `burst` saved up (it
// starts full). A taker may overdraw it (a received chunk is never split);
// the debt is paid back before the bucket has tokens again.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  TokenBucket(double rate_per_s, double burst, Clock::time_point now);
  // Whether a taker may take bytes now (tokens left after refilling).
  bool has_tokens(Clock::time_point now);
  void take(std::uint64_t bytes) { tokens_ -= static_cast<double>(bytes); }
  // How long until has_tokens() is true again (zero when it is now).
  Clock::duration wait(Clock::time_point now);
  double tokens() const { return tokens_; }

 private:
  void refill(Clock::time_point now);
  double rate_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace provkit::http
