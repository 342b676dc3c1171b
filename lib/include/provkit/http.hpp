#pragma once
// The one HTTP client of provkit (libcurl underneath).
//
// - Retries are a value (RetryPolicy) applied in one place: connection errors,
//   timeouts, stalls, 408, 429 (honouring Retry-After) and 5xx.
// - Redirects are followed here, not by curl, so that a bearer token is only
//   ever sent to the origin (scheme, host, port) it was given for.
// - All transfers run on one curl multi handle driven by one loop (Session):
//   requests go in, results come out through callbacks. The simple calls
//   (Client::get, Client::download_to_file) are a Session with one transfer.
// - Politeness: servers' RateLimit headers pace new requests to their origin
//   (RateLimitPacer, shared by every Session of the process), a 429 holds back
//   the whole Session, and Options::max_bytes_per_s caps its bandwidth with one
//   token bucket for all its transfers.
// - Messages never contain credentials: URLs in errors are redacted (no
//   userinfo, no query string) and the token is never part of any text.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace provkit::http {

// ---- pure helpers (unit-tested) -------------------------------------------

// Response or request headers, in order; lookups ignore case.
class Headers {
 public:
  void add(std::string name, std::string value) { items_.emplace_back(std::move(name), std::move(value)); }
  // The last value of that header, if present.
  std::optional<std::string> get(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  void clear() { items_.clear(); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// Parses one raw header line as curl hands it over ("Name: value\r\n").
// Returns false for the status line, blank lines and lines without a colon.
bool parse_header_line(std::string_view line, std::string& name, std::string& value);

// The URL of rel="next" in a Link header (RFC 8288), if any.
std::optional<std::string> parse_link_next(std::string_view link_header);

// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*": total = nullopt).
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

// Seconds until a rate limit resets, from a `RateLimit` header: the IETF draft's
// `"policy";r=0;t=172` (t) or the older `limit=10, remaining=0, reset=5` (reset).
std::optional<double> parse_ratelimit_reset(std::string_view value);

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
    Clock::time_point next_start{};    // no request before this
    Clock::time_point last_start{};
    double spacing_s = 0;              // between request starts ...
    Clock::time_point spacing_until{}; // ... until the window resets
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

// Retry-After as seconds: either delta-seconds or an HTTP-date relative to `now`.
std::optional<double> parse_retry_after(std::string_view value,
                                        std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// Parts of an absolute http(s) URL.
struct Url {
  std::string scheme;  // lower case
  std::string userinfo;
  std::string authority;  // as written: [userinfo@]host[:port]
  std::string host;    // lower case; IPv6 without brackets
  int port = 0;        // explicit or the scheme default
  std::string target;  // path and query, starting with '/'

  static std::optional<Url> parse(std::string_view text);
  // "scheme://host:port": two URLs with the same origin may share credentials.
  std::string origin() const;
};

// Resolves a Location header against the URL it came from (absolute,
// scheme-relative "//host/x", absolute-path "/x" and relative "x" forms).
std::string resolve_reference(const std::string& base, const std::string& location);

// The URL without userinfo and without query string, for messages.
std::string redact_url(const std::string& url);

// %XX sequences decoded, e.g. a wheel's file name from the last part of its
// URL ("torch-2.6.0%2Bcpu-..." is torch-2.6.0+cpu-...).
std::string percent_decode(const std::string& s);

// ---- retry policy -----------------------------------------------------------

struct RetryPolicy {
  int tries = 5;                  // attempts in all, the first included
  double backoff_base_s = 1.0;    // delay after the first failure; doubles each time
  double backoff_max_s = 8.0;     // cap of the exponential delay
  bool honour_retry_after = true; // a server's Retry-After replaces the computed delay
  double retry_after_max_s = 300; // but never more than this

  static bool retryable_status(long status);
  // Delay before attempt number `failed_attempts + 1` (failed_attempts >= 1).
  double delay_s(int failed_attempts, std::optional<double> retry_after = std::nullopt) const;
};

// ---- transfers -------------------------------------------------------------

// Header values (and bearer tokens) with CR, LF or NUL would let text end a
// header line and start another: Session::add refuses them (provkit::Error, usage).
bool is_safe_header_value(std::string_view value);

struct Request {
  std::string method = "GET";           // GET or HEAD
  std::string url;
  Headers headers;                       // extra request headers (never Authorization: use bearer_token)
  std::string bearer_token;              // sent as Authorization only to the origin of `url`
  std::optional<std::uint64_t> range_from;  // sends "Range: bytes=N-"
  std::optional<std::uint64_t> range_to;    // with range_from: "Range: bytes=N-M" (M inclusive)
  bool follow_redirects = true;
  int max_redirects = 10;
};

// One response on the way: a redirect hop or the final answer.
struct Hop {
  std::string url;
  long status = 0;
  Headers headers;
};

struct Response {
  long status = 0;
  Headers headers;         // of the final hop
  std::string body;        // kept for non-2xx answers (capped) and, in Client::fetch, for 2xx
  std::string url;         // final URL
  std::vector<Hop> hops;   // every hop, redirects first, final last
  int attempts = 0;
};

// Why a transfer did not produce a final HTTP answer.
enum class FailureKind { none, network, too_many_redirects, bad_redirect, aborted };

struct Result {
  Response response;
  FailureKind failure = FailureKind::none;
  std::string message;  // for failures: one sentence, credentials redacted
  bool ok() const { return failure == FailureKind::none && response.status >= 200 && response.status < 300; }
};

struct Options {
  std::string user_agent = std::string("provkit/") + PROVKIT_VERSION;
  long connect_timeout_s = 30;
  // Stall detection: a transfer that receives no byte for this long fails (and is retried).
  long stall_timeout_s = 60;
  // Slow-drip detection: a transfer that receives fewer than this many body
  // bytes per second, averaged over each stall_timeout_s window, fails the
  // same way (a server trickling 1 byte/s never goes silent). Time paused by
  // max_bytes_per_s does not count. 0: no minimum.
  std::uint64_t min_bytes_per_s = 1024;
  // Cap on a body kept in memory (Client::fetch: API answers, index pages):
  // more is a failure (FailureKind::aborted), never an allocation without end.
  std::uint64_t max_body_bytes = 64ull << 20;
  RetryPolicy retry;
  // Cap on the body bytes per second received by all transfers of a session
  // together (one shared budget); 0: no cap. A transfer that finds the budget
  // spent is paused (not counted as stalled) until it refills.
  std::uint64_t max_bytes_per_s = 0;
};

// Thrown from on_head/on_body to fail only that transfer (FailureKind::aborted,
// message = what()); any other exception aborts Session::run as a whole.
struct Abort : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the owner of a transfer supplies. All callbacks run on the loop's thread.
struct Transfer {
  Request request;
  // Before each attempt (the first and every retry, not redirects): lets the
  // owner set request.range_from from what it already has.
  std::function<void(Request&)> before_attempt;
  // The final hop's status and headers, before any body byte of a 2xx answer.
  std::function<void(const Hop&)> on_head;
  // Body bytes of a 2xx final answer. Throw to abort the transfer (the
  // exception is rethrown from Session::run after the transfer is cleaned up).
  std::function<void(const char*, std::size_t)> on_body;
  // Once, when the transfer is finished (after retries).
  std::function<void(Result&)> on_done;
  // Called when a failed attempt will be retried (for progress displays).
  std::function<void(const std::string& why, double delay_s)> on_retry;
};

// One curl multi handle, driven by run(). Transfers can be added before run()
// and from inside callbacks; run() returns when none is left.
class Session {
 public:
  explicit Session(Options options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void add(Transfer transfer);
  void run();
  const Options& options() const { return options_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Options options_;
};

// Simple synchronous calls for one request each.
class Client {
 public:
  explicit Client(Options options = {}) : options_(std::move(options)) {}
  // The whole answer, body in memory, after redirects and retries; never throws
  // for HTTP statuses (inspect result.response.status), throws
  // provkit::Error(network) if no answer came back after retries or the body
  // is larger than Options::max_body_bytes.
  Result fetch(Request request);
  // GET that must succeed (2xx); throws provkit::Error(network) naming the URL otherwise.
  std::string get(const std::string& url, const std::string& bearer_token = {});
  // GET into `target` atomically (temporary beside it, renamed when complete).
  void download_to_file(const std::string& url, const std::filesystem::path& target,
                        const std::string& bearer_token = {});
  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace provkit::http
