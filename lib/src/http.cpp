#include "provkit/http.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <deque>
#include <exception>
#include <list>
#include <mutex>

#include "provkit/error.hpp"
#include "provkit/fsutil.hpp"
#include "provkit/http_token.hpp"

namespace provkit::http {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

bool parse_u64(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  out = v;
  return true;
}

}  // namespace

// ---- headers -----------------------------------------------------------------

std::optional<std::string> Headers::get(std::string_view name) const {
  for (auto it = items_.rbegin(); it != items_.rend(); ++it)
    if (iequals(it->first, name)) return it->second;
  return std::nullopt;
}

bool parse_header_line(std::string_view line, std::string& name, std::string& value) {
  line = trim(line);
  if (line.empty() || line.starts_with("HTTP/")) return false;
  auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  name = std::string(trim(line.substr(0, colon)));
  value = std::string(trim(line.substr(colon + 1)));
  return !name.empty();
}

std::optional<std::string> parse_link_next(std::string_view header) {
  std::size_t i = 0;
  while (i < header.size()) {
    auto open = header.find('<', i);
    if (open == std::string_view::npos) return std::nullopt;
    auto close = header.find('>', open);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view url = header.substr(open + 1, close - open - 1);
    // Parameters run to the next comma that is followed by another "<".
    auto next_link = header.find('<', close);
    std::string_view params = header.substr(close + 1, next_link == std::string_view::npos ? std::string_view::npos
                                                                                          : next_link - close - 1);
    std::size_t p = 0;
    while (p < params.size()) {
      auto semi = params.find(';', p);
      std::string_view param = trim(params.substr(p, semi == std::string_view::npos ? std::string_view::npos : semi - p));
      p = semi == std::string_view::npos ? params.size() : semi + 1;
      while (!param.empty() && param.back() == ',') param = trim(param.substr(0, param.size() - 1));
      auto eq = param.find('=');
      if (eq == std::string_view::npos || !iequals(trim(param.substr(0, eq)), "rel")) continue;
      std::string_view v = trim(param.substr(eq + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      // rel may hold several space-separated relation types.
      std::size_t t = 0;
      while (t < v.size()) {
        auto sp = v.find(' ', t);
        std::string_view tok = v.substr(t, sp == std::string_view::npos ? std::string_view::npos : sp - t);
        if (iequals(tok, "next")) return std::string(url);
        t = sp == std::string_view::npos ? v.size() : sp + 1;
      }
    }
    if (next_link == std::string_view::npos) break;
    i = next_link;
  }
  return std::nullopt;
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim(value);
  if (value.size() < 6 || !iequals(value.substr(0, 5), "bytes") || value[5] != ' ') return std::nullopt;
  value = trim(value.substr(6));
  auto dash = value.find('-');
  auto slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  ContentRange r;
  if (!parse_u64(trim(value.substr(0, dash)), r.first)) return std::nullopt;
  if (!parse_u64(trim(value.substr(dash + 1, slash - dash - 1)), r.last)) return std::nullopt;
  auto total = trim(value.substr(slash + 1));
  if (total != "*") {
    std::uint64_t t;
    if (!parse_u64(total, t)) return std::nullopt;
    r.total = t;
    if (r.last >= t) return std::nullopt;
  }
  if (r.last < r.first) return std::nullopt;
  return r;
}

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
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
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
        item.params.emplace_back(trim(part.substr(0, eq)), trim(part.substr(eq + 1)));
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

std::optional<double> parse_ratelimit_reset(std::string_view value) {
  auto s = parse_ratelimit(value);
  if (!s) return std::nullopt;
  return s->reset_s;
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

// ---- URLs --------------------------------------------------------------------

std::optional<Url> Url::parse(std::string_view text) {
  auto sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  Url u;
  u.scheme = lower(text.substr(0, sep));
  if (u.scheme != "http" && u.scheme != "https") return std::nullopt;
  std::string_view rest = text.substr(sep + 3);
  auto hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  auto path_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_start);
  u.target = path_start == std::string_view::npos ? "/" : std::string(rest.substr(path_start));
  if (u.target.front() == '?') u.target = "/" + u.target;
  u.authority = std::string(authority);
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    u.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    u.host = lower(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else {
    auto colon = authority.rfind(':');
    u.host = lower(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return std::nullopt;
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    std::uint64_t p;
    if (!parse_u64(port, p) || p == 0 || p > 65535) return std::nullopt;
    u.port = static_cast<int>(p);
  }
  return u;
}

std::string Url::origin() const {
  bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

namespace {
// RFC 3986 5.2.4.
std::string remove_dot_segments(std::string path) {
  std::string out;
  while (!path.empty()) {
    if (path.starts_with("../")) path.erase(0, 3);
    else if (path.starts_with("./")) path.erase(0, 2);
    else if (path.starts_with("/./")) path.erase(0, 2);
    else if (path == "/.") path = "/";
    else if (path.starts_with("/../") || path == "/..") {
      path = path == "/.." ? "/" : path.substr(3);
      auto slash = out.rfind('/');
      out.erase(slash == std::string::npos ? 0 : slash);
    } else if (path == "." || path == "..") path.clear();
    else {
      auto next = path.find('/', path[0] == '/' ? 1 : 0);
      out += path.substr(0, next);
      path.erase(0, next == std::string::npos ? path.size() : next);
    }
  }
  return out;
}
}  // namespace

std::string resolve_reference(const std::string& base, const std::string& location) {
  std::string loc(trim(location));
  // Absolute: it has a scheme.
  auto colon = loc.find(':');
  if (colon != std::string::npos && colon > 0 && std::isalpha(static_cast<unsigned char>(loc[0])) &&
      loc.find_first_of("/?#") > colon)
    return loc;
  auto b = Url::parse(base);
  if (!b) return loc;
  if (loc.starts_with("//")) return b->scheme + ":" + loc;
  std::string prefix = b->scheme + "://" + b->authority;
  std::string base_path = b->target.substr(0, b->target.find('?'));
  if (loc.empty()) return prefix + b->target;
  if (loc[0] == '/') {
    auto q = loc.find('?');
    return prefix + remove_dot_segments(loc.substr(0, q)) + (q == std::string::npos ? "" : loc.substr(q));
  }
  if (loc[0] == '?') return prefix + base_path + loc;
  auto q = loc.find('?');
  std::string dir = base_path.substr(0, base_path.rfind('/') + 1);
  return prefix + remove_dot_segments(dir + loc.substr(0, q)) + (q == std::string::npos ? "" : loc.substr(q));
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string redact_url(const std::string& url) {
  std::string s = url.substr(0, url.find_first_of("?#"));
  auto sep = s.find("://");
  if (sep == std::string::npos) return s;
  auto auth_end = s.find('/', sep + 3);
  auto at = s.rfind('@', auth_end == std::string::npos ? std::string::npos : auth_end);
  if (at != std::string::npos && at > sep) s.erase(sep + 3, at - sep - 2);
  return s;
}

// ---- retry policy ------------------------------------------------------------

bool RetryPolicy::retryable_status(long status) { return status == 408 || status == 429 || status >= 500; }

double RetryPolicy::delay_s(int failed_attempts, std::optional<double> retry_after) const {
  if (honour_retry_after && retry_after) return std::min(*retry_after, retry_after_max_s);
  double d = backoff_base_s * std::pow(2.0, std::max(0, failed_attempts - 1));
  return std::min(d, backoff_max_s);
}

// ---- session -----------------------------------------------------------------

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

constexpr std::size_t kErrorBodyCap = 64 * 1024;

enum class BodyMode { undecided, owner, collect, discard };

// What servers said of their rate limits holds for every session of the process.
struct SharedPacer {
  std::mutex mutex;
  RateLimitPacer pacer;
};
SharedPacer& shared_pacer() {
  static SharedPacer p;
  return p;
}

std::string origin_of(const std::string& url) {
  auto u = Url::parse(url);
  return u ? u->origin() : url;
}

// The bandwidth cap's bucket holds 100 ms worth of bytes (at least 64 KiB):
// small enough that the cap holds over short spans too, large enough that a
// fast link is not paused after every read.
constexpr double kBurstSeconds = 0.1;
constexpr double kMinBurstBytes = 64 * 1024;

}  // namespace

struct Session::Impl {
  struct Active {
    Impl* session = nullptr;
    Transfer t;
    int attempt = 0;
    Request current;     // this attempt's request, after before_attempt
    std::string url;     // this hop's URL
    int redirects = 0;
    CURL* easy = nullptr;
    curl_slist* header_list = nullptr;
    Hop hop;
    BodyMode mode = BodyMode::undecided;
    std::string body;
    Response response;
    std::exception_ptr error;
    char errbuf[CURL_ERROR_SIZE] = {0};
    std::chrono::steady_clock::time_point due;
    // Stall detection: when a byte last arrived on this hop.
    std::chrono::steady_clock::time_point last_byte;
    curl_off_t last_count = -1;
    long stall_timeout_s = 0;
    bool stalled = false;
    // Slow-drip detection: the current window's start and the byte count then.
    std::chrono::steady_clock::time_point window_start;
    curl_off_t window_count = 0;
    bool too_slow = false;
    // Paused by the bandwidth cap (curl keeps the data and hands it over again
    // on unpause); pause_order makes the longest paused resume first.
    bool paused = false;
    std::uint64_t pause_order = 0;
    // In `waiting` for a redirect hop held back by a rate limit, not for a new attempt.
    bool resume_hop = false;
  };

  Options options;
  CURLM* multi = nullptr;
  std::list<std::unique_ptr<Active>> running;
  std::deque<std::unique_ptr<Active>> waiting;  // fresh transfers and retries, by due time
  // A rate limit (429) holds back every request of the session, not only the
  // one that got it: none starts before this.
  std::chrono::steady_clock::time_point paused_until{};
  std::exception_ptr pending_error;
  // The bandwidth cap: one budget for the body bytes of every transfer.
  std::optional<TokenBucket> bandwidth;
  std::uint64_t pauses = 0;

  explicit Impl(Options o) : options(std::move(o)) {
    global_init();
    multi = curl_multi_init();
    if (options.max_bytes_per_s > 0) {
      double rate = static_cast<double>(options.max_bytes_per_s);
      bandwidth.emplace(rate, std::max(rate * kBurstSeconds, kMinBurstBytes), std::chrono::steady_clock::now());
    }
  }
  ~Impl() {
    for (auto& a : running) release(*a);
    curl_multi_cleanup(multi);
  }

  void release(Active& a) {
    if (a.easy) {
      curl_multi_remove_handle(multi, a.easy);
      curl_easy_cleanup(a.easy);
      a.easy = nullptr;
    }
    if (a.header_list) {
      curl_slist_free_all(a.header_list);
      a.header_list = nullptr;
    }
  }

  static size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Active*>(user);
    std::string_view line(data, size * n);
    std::string name, value;
    if (line.starts_with("HTTP/")) {
      a->hop.headers.clear();  // a new response (after 1xx)
    } else if (parse_header_line(line, name, value)) {
      a->hop.headers.add(std::move(name), std::move(value));
    } else if (trim(line).empty()) {
      long status = 0;
      curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
      if (status >= 100 && status < 200) return size * n;
      a->hop.status = status;
      a->session->observe_ratelimit(*a);
      bool redirect = status >= 300 && status < 400 && a->current.follow_redirects && a->hop.headers.get("location");
      if (redirect) {
        a->mode = BodyMode::discard;
      } else if (status >= 200 && status < 300) {
        a->mode = BodyMode::owner;
        try {
          if (a->t.on_head) a->t.on_head(a->hop);
        } catch (...) {
          a->error = std::current_exception();
          return 0;
        }
      } else {
        a->mode = BodyMode::collect;
      }
    }
    return size * n;
  }

  static size_t on_write(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Active*>(user);
    std::size_t len = size * n;
    if (auto& bucket = a->session->bandwidth; bucket && len > 0) {
      if (!bucket->has_tokens(std::chrono::steady_clock::now())) {
        a->paused = true;
        a->pause_order = ++a->session->pauses;
        return CURL_WRITEFUNC_PAUSE;
      }
      bucket->take(len);
    }
    switch (a->mode) {
      case BodyMode::owner:
        try {
          if (a->t.on_body) a->t.on_body(data, len);
        } catch (...) {
          a->error = std::current_exception();
          return 0;
        }
        break;
      case BodyMode::collect:
        if (a->body.size() < kErrorBodyCap) a->body.append(data, std::min(len, kErrorBodyCap - a->body.size()));
        break;
      default:
        break;
    }
    return len;
  }

  // curl calls this at least once a second, also while nothing arrives.
  static int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t) {
    auto* a = static_cast<Active*>(user);
    auto now = std::chrono::steady_clock::now();
    auto window = std::chrono::seconds(a->stall_timeout_s);
    if (a->paused) {  // waiting for the bandwidth cap, not for the server
      a->last_byte = a->window_start = now;
      a->window_count = dlnow;
      return 0;
    }
    if (std::uint64_t min_rate = a->session->options.min_bytes_per_s; min_rate > 0 && now - a->window_start >= window) {
      auto got = static_cast<std::uint64_t>(std::max<curl_off_t>(0, dlnow - a->window_count));
      if (got < min_rate * static_cast<std::uint64_t>(a->stall_timeout_s)) {
        a->too_slow = true;
        return 1;  // aborts the transfer: CURLE_ABORTED_BY_CALLBACK
      }
      a->window_start = now;
      a->window_count = dlnow;
    }
    if (dlnow != a->last_count) {
      a->last_count = dlnow;
      a->last_byte = now;
      return 0;
    }
    if (now - a->last_byte > window) {
      a->stalled = true;
      return 1;
    }
    return 0;
  }

  void start_attempt(Active& a) {
    ++a.attempt;
    a.current = a.t.request;
    if (a.t.before_attempt) a.t.before_attempt(a.current);
    a.url = a.current.url;
    a.redirects = 0;
    a.response = Response{};
    start_hop(a);
  }

  void start_hop(Active& a) {
    release(a);
    a.hop = Hop{};
    a.hop.url = a.url;
    a.mode = BodyMode::undecided;
    a.body.clear();
    a.errbuf[0] = 0;
    CURL* e = curl_easy_init();
    a.easy = e;
    curl_easy_setopt(e, CURLOPT_URL, a.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &a);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_s);
    a.last_byte = a.window_start = std::chrono::steady_clock::now();
    a.last_count = -1;
    a.window_count = 0;
    a.stalled = a.too_slow = false;
    a.paused = false;
    a.stall_timeout_s = options.stall_timeout_s;
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &Impl::on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, &a);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, a.errbuf);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &a);
    if (bandwidth) {  // reads no bigger than the cap's burst, so that it holds over short spans
      long buffer = static_cast<long>(std::clamp(options.max_bytes_per_s * kBurstSeconds, 16.0 * 1024, 512.0 * 1024));
      curl_easy_setopt(e, CURLOPT_BUFFERSIZE, buffer);
    }
    if (a.current.method == "HEAD") curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    for (const auto& [name, value] : a.current.headers.items())
      a.header_list = curl_slist_append(a.header_list, (name + ": " + value).c_str());
    // The token goes only to the origin it was given for: never after a
    // redirect to another scheme, host or port.
    if (!a.current.bearer_token.empty() && token_allowed(a.current.url, a.url))
      a.header_list = curl_slist_append(a.header_list, ("Authorization: Bearer " + a.current.bearer_token).c_str());
    if (a.current.range_from) {
      std::string range = "Range: bytes=" + std::to_string(*a.current.range_from) + "-";
      if (a.current.range_to) range += std::to_string(*a.current.range_to);
      a.header_list = curl_slist_append(a.header_list, range.c_str());
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, a.header_list);
    curl_multi_add_handle(multi, e);
  }

  void finish(std::unique_ptr<Active> a, FailureKind failure, std::string message) {
    release(*a);
    Result r;
    r.response = std::move(a->response);
    r.response.attempts = a->attempt;
    r.failure = failure;
    r.message = std::move(message);
    if (a->t.on_done) a->t.on_done(r);
  }

  void retry_later(std::unique_ptr<Active> a, const std::string& why, std::optional<double> retry_after) {
    release(*a);
    double delay = options.retry.delay_s(a->attempt, retry_after);
    if (a->t.on_retry) a->t.on_retry(why, delay);
    a->due = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<long long>(delay * 1e6));
    waiting.push_back(std::move(a));
  }

  void completed(std::unique_ptr<Active> a, CURLcode code) {
    if (a->error) {
      try {
        std::rethrow_exception(a->error);
      } catch (const Abort& abort) {
        return finish(std::move(a), FailureKind::aborted, abort.what());
      } catch (...) {
        release(*a);
        pending_error = a->error;
        return;
      }
    }
    std::string where = redact_url(a->url);
    bool can_retry = a->attempt < options.retry.tries;
    if (code != CURLE_OK) {
      std::string why = a->stalled ? "transfer stalled (no data for " + std::to_string(options.stall_timeout_s) + " s)"
                        : a->too_slow ? "transfer too slow (fewer than " + std::to_string(options.min_bytes_per_s) +
                                            " bytes per second over " + std::to_string(options.stall_timeout_s) + " s)"
                                      : std::string(a->errbuf[0] ? a->errbuf : curl_easy_strerror(code));
      // curl's messages may quote the URL; keep credentials out of them.
      if (auto q = why.find('?'); q != std::string::npos) why = why.substr(0, q);
      std::string message = where + ": " + why;
      if (can_retry) return retry_later(std::move(a), message, std::nullopt);
      return finish(std::move(a), FailureKind::network,
                    message + " (after " + std::to_string(a->attempt) + " attempts)");
    }
    long status = a->hop.status;
    a->response.hops.push_back(a->hop);
    if (a->mode == BodyMode::discard) {  // a redirect to follow
      if (++a->redirects > a->current.max_redirects)
        return finish(std::move(a), FailureKind::too_many_redirects,
                      "too many redirects (more than " + std::to_string(a->current.max_redirects) + ") from " +
                          redact_url(a->current.url));
      std::string next = resolve_reference(a->url, *a->hop.headers.get("location"));
      if (!Url::parse(next))
        return finish(std::move(a), FailureKind::bad_redirect, where + " redirects to an unusable location");
      a->url = next;
      if (auto when = pace(next)) {  // that origin asked us to wait
        release(*a);
        a->due = *when;
        a->resume_hop = true;
        waiting.push_back(std::move(a));
        return;
      }
      start_hop(*a);
      running.push_back(std::move(a));
      return;
    }
    a->response.status = status;
    a->response.headers = a->hop.headers;
    a->response.url = a->url;
    a->response.body = std::move(a->body);
    if (RetryPolicy::retryable_status(status) && can_retry) {
      std::optional<double> ra;
      if (auto h = a->hop.headers.get("retry-after")) ra = parse_retry_after(*h);
      else if (auto rl = a->hop.headers.get("ratelimit")) {
        if (auto st = parse_ratelimit(*rl, a->hop.headers.get("ratelimit-policy").value_or(""))) ra = st->reset_s;
      }
      if (status == 429) {
        double delay = options.retry.delay_s(a->attempt, ra);
        paused_until = std::max(paused_until, std::chrono::steady_clock::now() +
                                                  std::chrono::microseconds(static_cast<long long>(delay * 1e6)));
      }
      return retry_later(std::move(a), where + ": HTTP " + std::to_string(status), ra);
    }
    finish(std::move(a), FailureKind::none, {});
  }

  // Records what a response said of its origin's rate limit (any status).
  void observe_ratelimit(const Active& a) {
    auto rl = a.hop.headers.get("ratelimit");
    if (!rl) return;
    auto state = parse_ratelimit(*rl, a.hop.headers.get("ratelimit-policy").value_or(""));
    if (!state) return;
    auto& shared = shared_pacer();
    std::lock_guard lock(shared.mutex);
    shared.pacer.observe(origin_of(a.url), *state, std::chrono::steady_clock::now(), options.retry.retry_after_max_s);
  }

  // Nullopt when a request to `url` may start now (and it is counted as
  // started), else when it may.
  std::optional<std::chrono::steady_clock::time_point> pace(const std::string& url) {
    auto& shared = shared_pacer();
    std::lock_guard lock(shared.mutex);
    return shared.pacer.try_start(origin_of(url), std::chrono::steady_clock::now());
  }

  // Hands the bandwidth budget to paused transfers, longest paused first.
  void resume_paused() {
    std::vector<Active*> paused;
    for (auto& a : running)
      if (a->paused) paused.push_back(a.get());
    std::sort(paused.begin(), paused.end(), [](Active* x, Active* y) { return x->pause_order < y->pause_order; });
    for (Active* a : paused) {
      auto now = std::chrono::steady_clock::now();
      if (!bandwidth->has_tokens(now)) break;
      a->paused = false;
      // The time paused counts neither as silence nor against the minimum rate.
      a->last_byte = a->window_start = now;
      a->window_count = std::max<curl_off_t>(a->last_count, 0);
      // curl may hand the kept data over right here, from inside curl_easy_pause.
      CURLcode code = curl_easy_pause(a->easy, CURLPAUSE_CONT);
      if (code != CURLE_OK) {
        auto it = std::find_if(running.begin(), running.end(), [&](auto& r) { return r.get() == a; });
        auto owned = std::move(*it);
        running.erase(it);
        try {
          completed(std::move(owned), code);
        } catch (...) {
          pending_error = std::current_exception();
        }
        if (pending_error) return;
      }
    }
  }

  void run() {
    while (!running.empty() || !waiting.empty()) {
      auto now = std::chrono::steady_clock::now();
      // Start what is due (fresh transfers are due at once).
      for (auto it = waiting.begin(); it != waiting.end();) {
        Active& w = **it;
        if (w.due <= now && paused_until <= now) {
          if (auto when = pace(w.resume_hop ? w.url : w.t.request.url)) {  // rate limited origin
            w.due = *when;
            ++it;
            continue;
          }
          auto a = std::move(*it);
          it = waiting.erase(it);
          if (a->resume_hop) {
            a->resume_hop = false;
            start_hop(*a);
          } else {
            start_attempt(*a);
          }
          running.push_back(std::move(a));
        } else {
          ++it;
        }
      }
      if (bandwidth) resume_paused();
      int still = 0;
      curl_multi_perform(multi, &still);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURLcode code = msg->data.result;
        auto it = std::find_if(running.begin(), running.end(), [&](auto& a) { return a->easy == msg->easy_handle; });
        if (it == running.end()) continue;
        auto a = std::move(*it);
        running.erase(it);
        try {
          completed(std::move(a), code);
        } catch (...) {
          pending_error = std::current_exception();
        }
        if (pending_error) break;
      }
      if (pending_error) {
        for (auto& a : running) release(*a);
        running.clear();
        waiting.clear();
        auto e = pending_error;
        pending_error = nullptr;
        std::rethrow_exception(e);
      }
      int timeout_ms = 1000;
      now = std::chrono::steady_clock::now();
      for (auto& w : waiting) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::max(w->due, paused_until) - now).count();
        timeout_ms = static_cast<int>(std::clamp<long long>(ms, 0, timeout_ms));
      }
      // Paused transfers wake when the bandwidth budget has refilled.
      if (bandwidth && std::any_of(running.begin(), running.end(), [](auto& a) { return a->paused; })) {
        auto us = std::chrono::duration_cast<std::chrono::microseconds>(bandwidth->wait(now)).count();
        timeout_ms = static_cast<int>(std::clamp<long long>((us + 999) / 1000, 1, timeout_ms));
      }
      // Poll only while something is in flight or a retry is due: with nothing
      // left the loop must end at once, not after a 1 s idle poll.
      if (!running.empty() || (!waiting.empty() && timeout_ms > 0))
        curl_multi_poll(multi, nullptr, 0, timeout_ms, nullptr);
    }
  }
};

Session::Session(Options options) : impl_(std::make_unique<Impl>(options)), options_(std::move(options)) {}
Session::~Session() = default;

bool is_safe_header_value(std::string_view value) { return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos; }

void Session::add(Transfer transfer) {
  // Refused here, before anything is sent: a line break in a value would
  // put a header of its own on the wire.
  bool safe = is_safe_header_value(transfer.request.bearer_token);
  for (const auto& [name, value] : transfer.request.headers.items())
    safe = safe && is_safe_header_value(name) && is_safe_header_value(value) && name.find(':') == std::string::npos;
  if (!safe) throw Error(ExitCode::usage, "a request header or token holds a line break or NUL; nothing was sent");
  auto a = std::make_unique<Impl::Active>();
  a->session = impl_.get();
  a->t = std::move(transfer);
  a->due = std::chrono::steady_clock::now();
  impl_->waiting.push_back(std::move(a));
}

void Session::run() { impl_->run(); }

// ---- simple client -----------------------------------------------------------

Result Client::fetch(Request request) {
  Session session(options_);
  Result out;
  std::string body;
  Transfer t;
  t.request = std::move(request);
  std::uint64_t cap = options_.max_body_bytes;
  std::string where = redact_url(t.request.url);
  t.on_head = [&](const Hop&) { body.clear(); };
  t.on_body = [&](const char* d, std::size_t n) {
    if (body.size() + n > cap)
      throw Abort(where + ": the answer is longer than the " + std::to_string(cap) + " bytes allowed for it");
    body.append(d, n);
  };
  t.on_done = [&](Result& r) { out = std::move(r); };
  session.add(std::move(t));
  session.run();
  if (out.failure != FailureKind::none) throw Error(ExitCode::network, out.message);
  if (out.response.status >= 200 && out.response.status < 300) out.response.body = std::move(body);
  return out;
}

std::string Client::get(const std::string& url, const std::string& bearer_token) {
  Request req;
  req.url = url;
  req.bearer_token = bearer_token;
  Result r = fetch(std::move(req));
  if (!r.ok())
    throw Error(ExitCode::network, redact_url(url) + ": HTTP " + std::to_string(r.response.status) + " after " +
                                       std::to_string(r.response.attempts) + " attempt(s)");
  return std::move(r.response.body);
}

void Client::download_to_file(const std::string& url, const std::filesystem::path& target,
                              const std::string& bearer_token) {
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  auto tmp = temp_path_beside(target, "part");
  int fd = -1;
  auto close_fd = [&] {
    if (fd >= 0) ::close(fd);
    fd = -1;
  };
  Session session(options_);
  Result out;
  Transfer t;
  t.request.url = url;
  t.request.bearer_token = bearer_token;
  t.on_head = [&](const Hop&) {  // every attempt starts the file over
    close_fd();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error(ExitCode::check_failed, tmp.string() + ": cannot create: " + std::strerror(errno));
  };
  t.on_body = [&](const char* d, std::size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd, d, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw Error(ExitCode::check_failed, tmp.string() + ": write error: " + std::strerror(errno));
      d += w;
      n -= static_cast<std::size_t>(w);
    }
  };
  t.on_done = [&](Result& r) { out = std::move(r); };
  session.add(std::move(t));
  try {
    session.run();
  } catch (...) {
    close_fd();
    std::filesystem::remove(tmp);
    throw;
  }
  if (!out.ok()) {
    close_fd();
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    if (out.failure != FailureKind::none) throw Error(ExitCode::network, out.message);
    throw Error(ExitCode::network, redact_url(url) + ": HTTP " + std::to_string(out.response.status));
  }
  if (fd < 0) fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);  // empty body
  ::fsync(fd);
  close_fd();
  rename_durable(tmp, target);
}

}  // namespace provkit::http
