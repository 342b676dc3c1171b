#include "provkit/http/ratelimit.hpp"

#include <algorithm>
#include <cmath>

#include "provkit/util/strings.hpp"

namespace provkit::http {

using util::iequals;
using util::parse_u64;
using util::trim_view;

namespace {

// Splits at `sep` outside double quotes (structured-field lists and parameters).
std::vector<std::string_view> split_unquoted(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && quoted) ++i;
    else if (s[i] == '"') quoted = !quoted;
    else if (s[i] == sep && !quoted) {
      out.push_back(trim_view(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim_view(s.substr(start)));
  return out;
}

// Seconds as a non-negative decimal ("172", "1.5").
std::optional<double> parse_seconds(std::string_view s) {
  auto dot = s.find('.');
  std::uint64_t whole = 0, frac = 0;
  if (!parse_u64(s.substr(0, dot), whole)) return std::nullopt;
  if (dot == std::string_view::npos) return static_cast<double>(whole);
  std::string_view f = s.substr(dot + 1);
  if (f.empty() || f.size() > 9 || !parse_u64(f, frac)) return std::nullopt;
  return static_cast<double>(whole) + static_cast<double>(frac) / std::pow(10.0, static_cast<double>(f.size()));
}

// One member of a RateLimit or RateLimit-Policy list: its quoted strings
// (names) and its key=value parameters.
struct LimitItem {
  std::vector<std::string_view> names;
  std::vector<std::pair<std::string_view, std::string_view>> params;
  std::optional<std::string_view> param(std::string_view key) const {
    for (const auto& [k, v] : params)
      if (iequals(k, key)) return v;
    return std::nullopt;
  }
};

std::vector<LimitItem> parse_limit_items(std::string_view value) {
  std::vector<LimitItem> items;
  for (auto member : split_unquoted(value, ',')) {
    LimitItem item;
    for (auto part : split_unquoted(member, ';')) {
      if (part.size() >= 2 && part.front() == '"' && part.back() == '"') {
        item.names.push_back(part.substr(1, part.size() - 2));
      } else if (auto eq = part.find('='); eq != std::string_view::npos) {
        item.params.emplace_back(trim_view(part.substr(0, eq)), trim_view(part.substr(eq + 1)));
      }
    }
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

std::optional<RateLimitState> parse_ratelimit(std::string_view ratelimit, std::string_view policy) {
  auto items = parse_limit_items(ratelimit);
  auto policies = parse_limit_items(policy);
  std::vector<RateLimitState> found;
  // IETF draft: every member with r (and t) is one limit.
  for (const auto& item : items) {
    std::uint64_t r;
    auto rv = item.param("r");
    if (!rv || !parse_u64(*rv, r)) continue;
    RateLimitState s;
    s.remaining = r;
    // Its policy: the one naming it, else the only one there is.
    const LimitItem* pol = nullptr;
    for (const auto& p : policies)
      for (auto n : p.names)
        for (auto own : item.names)
          if (n == own) pol = &p;
    if (!pol && policies.size() == 1 && policies[0].param("q")) pol = &policies[0];
    std::uint64_t q;
    if (pol && pol->param("q") && parse_u64(*pol->param("q"), q)) s.quota = q;
    std::optional<double> t;
    if (auto tv = item.param("t")) t = parse_seconds(*tv);
    if (!t && pol && pol->param("w")) t = parse_seconds(*pol->param("w"));  // at worst a whole window
    if (!t) continue;
    s.reset_s = *t;
    found.push_back(s);
  }
  // The older draft: "limit=100, remaining=12, reset=172" (keys spread over the list).
  std::optional<std::uint64_t> limit, remaining;
  std::optional<double> reset;
  for (const auto& item : items)
    for (const auto& [k, v] : item.params) {
      std::uint64_t n;
      if (iequals(k, "limit") && parse_u64(v, n)) limit = n;
      if (iequals(k, "remaining") && parse_u64(v, n)) remaining = n;
      if (iequals(k, "reset")) reset = parse_seconds(v);
    }
  if (remaining && reset) found.push_back({*remaining, *reset, limit});
  if (found.empty()) return std::nullopt;
  // The most restrictive: the longest wait it asks for, then the fewest left.
  return *std::max_element(found.begin(), found.end(), [](const RateLimitState& a, const RateLimitState& b) {
    double wa = ratelimit_spacing_s(a), wb = ratelimit_spacing_s(b);
    return wa != wb ? wa < wb : a.remaining > b.remaining;
  });
}

double ratelimit_spacing_s(const RateLimitState& s) {
  if (s.remaining == 0) return s.reset_s;
  bool low = s.quota ? s.remaining * 10 <= *s.quota : s.remaining < 10;
  return low ? s.reset_s / static_cast<double>(s.remaining) : 0.0;
}

// ---- pacing and bandwidth ---------------------------------------------------------

RateLimitPacer::Origin& RateLimitPacer::at(const std::string& origin) {
  for (auto& [name, o] : origins_)
    if (name == origin) return o;
  return origins_.emplace_back(origin, Origin{}).second;
}

void RateLimitPacer::observe(const std::string& origin, const RateLimitState& state, Clock::time_point now,
                             double max_wait_s) {
  auto secs = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
  Origin& o = at(origin);
  double wait = std::min(ratelimit_spacing_s(state), max_wait_s);
  if (state.remaining == 0) {
    o.next_start = std::max(o.next_start, now + secs(wait));
    o.spacing_s = 0;
  } else if (wait > 0) {
    // The last request counts as the first of the spaced ones.
    o.spacing_s = wait;
    o.spacing_until = now + secs(std::min(state.reset_s, max_wait_s));
    o.next_start = std::max(o.next_start, o.last_start + secs(wait));
  } else {
    o.spacing_s = 0;  // plenty left: no pacing (a pending 0-left wait still holds)
  }
}

std::optional<RateLimitPacer::Clock::time_point> RateLimitPacer::try_start(const std::string& origin,
                                                                           Clock::time_point now) {
  Origin& o = at(origin);
  if (now < o.next_start) return o.next_start;
  o.last_start = now;
  if (o.spacing_s > 0 && now < o.spacing_until)
    o.next_start = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.spacing_s));
  return std::nullopt;
}

TokenBucket::TokenBucket(double rate_per_s, double burst, Clock::time_point now)
    : rate_(rate_per_s), burst_(burst), tokens_(burst), last_(now) {}

void TokenBucket::refill(Clock::time_point now) {
  if (now <= last_) return;
  tokens_ = std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

bool TokenBucket::has_tokens(Clock::time_point now) {
  refill(now);
  return tokens_ > 0;
}

TokenBucket::Clock::duration TokenBucket::wait(Clock::time_point now) {
  if (has_tokens(now)) return Clock::duration::zero();
  // Until the debt is paid and the first token is back.
  double secs = (-tokens_ + 1) / rate_;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
}

}  // namespace provkit::http
