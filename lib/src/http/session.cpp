// The curl multi loop: Session and the life of one transfer (attempts,
// redirect hops, retries, pacing, the bandwidth cap, stall detection).
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <list>
#include <mutex>

#include "ca_bundle.hpp"
#include "provkit/error.hpp"
#include "provkit/http/client.hpp"
#include "provkit/http/ratelimit.hpp"
#include "provkit/http/token.hpp"
#include "provkit/http/url.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::http {

using util::trim_view;

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

constexpr std::size_t kErrorBodyCap = std::size_t{64} * 1024;

// Every option a transfer needs is set, or the run stops: a transfer without
// its timeouts, callbacks or protocol limit must never go out.
template <typename T>
void set_option(CURL* easy, CURLoption option, T value) {
  CURLcode code = curl_easy_setopt(easy, option, value);
  if (code == CURLE_OK) return;
  const curl_easyoption* known = curl_easy_option_by_id(option);
  throw CurlError(std::string("CURLOPT_") + (known ? known->name : std::to_string(option).c_str()),
                  static_cast<int>(code), curl_easy_strerror(code));
}

void check_multi(CURLMcode code, const char* call) {
  if (code != CURLM_OK) throw CurlError(call, static_cast<int>(code), curl_multi_strerror(code));
}

// A request header line added to `list` (curl copies the text). On failure
// curl leaves `list` as it was, still the owner's to free.
curl_slist* append_header(curl_slist* list, const std::string& line) {
  curl_slist* longer = curl_slist_append(list, line.c_str());
  if (!longer)
    throw CurlError("curl_slist_append", static_cast<int>(CURLE_OUT_OF_MEMORY),
                    curl_easy_strerror(CURLE_OUT_OF_MEMORY));
  return longer;
}

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
    Request current;  // this attempt's request, after before_attempt
    std::string url;  // this hop's URL
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
    // Where it sits in `running` while its easy handle is in the multi handle.
    std::list<std::unique_ptr<Active>>::iterator in_running;
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
  std::function<void()> round_end;

  explicit Impl(Options o) : options(std::move(o)) {
    global_init();
    multi = curl_multi_init();
    if (!multi) throw CurlError("curl_multi_init", static_cast<int>(CURLM_OUT_OF_MEMORY), "no multi handle");
    if (options.max_bytes_per_s > 0) {
      double rate = static_cast<double>(options.max_bytes_per_s);
      bandwidth.emplace(rate, std::max(rate * kBurstSeconds, kMinBurstBytes), std::chrono::steady_clock::now());
    }
  }
  ~Impl() {
    for (auto& a : running) release(*a);
    curl_multi_cleanup(multi);
  }

  // A transfer whose easy handle is in the multi handle, found again through
  // CURLINFO_PRIVATE when curl says it is done.
  void start_running(std::unique_ptr<Active> a) {
    running.push_back(std::move(a));
    running.back()->in_running = std::prev(running.end());
  }
  std::unique_ptr<Active> stop_running(Active& a) {
    auto owned = std::move(*a.in_running);
    running.erase(a.in_running);
    return owned;
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
    } else if (trim_view(line).empty()) {
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
      default: break;
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
    if (!e) throw CurlError("curl_easy_init", static_cast<int>(CURLE_FAILED_INIT), "no easy handle");
    a.easy = e;
    try {
      set_up_hop(a, e);
    } catch (...) {
      release(a);  // the handle never reached the multi handle
      throw;
    }
  }

  void set_up_hop(Active& a, CURL* e) {
    set_option(e, CURLOPT_URL, a.url.c_str());
    set_option(e, CURLOPT_PRIVATE, &a);
    set_option(e, CURLOPT_NOSIGNAL, 1L);
    set_option(e, CURLOPT_FOLLOWLOCATION, 0L);
    set_option(e, CURLOPT_PROTOCOLS_STR, "http,https");
    set_option(e, CURLOPT_USERAGENT, options.user_agent.c_str());
    set_option(e, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_s);
    if (const auto& ca = host_ca_location()) {
      if (!ca->file.empty()) set_option(e, CURLOPT_CAINFO, ca->file.c_str());
      if (!ca->dir.empty()) set_option(e, CURLOPT_CAPATH, ca->dir.c_str());
    }
    a.last_byte = a.window_start = std::chrono::steady_clock::now();
    a.last_count = -1;
    a.window_count = 0;
    a.stalled = a.too_slow = false;
    a.paused = false;
    a.stall_timeout_s = options.stall_timeout_s;
    set_option(e, CURLOPT_NOPROGRESS, 0L);
    set_option(e, CURLOPT_XFERINFOFUNCTION, &Impl::on_progress);
    set_option(e, CURLOPT_XFERINFODATA, &a);
    set_option(e, CURLOPT_BUFFERSIZE, 512L * 1024L);
    set_option(e, CURLOPT_ERRORBUFFER, a.errbuf);
    set_option(e, CURLOPT_HEADERFUNCTION, &Impl::on_header);
    set_option(e, CURLOPT_HEADERDATA, &a);
    set_option(e, CURLOPT_WRITEFUNCTION, &Impl::on_write);
    set_option(e, CURLOPT_WRITEDATA, &a);
    if (bandwidth) {  // reads no bigger than the cap's burst, so that it holds over short spans
      long buffer = static_cast<long>(std::clamp(options.max_bytes_per_s * kBurstSeconds, 16.0 * 1024, 512.0 * 1024));
      set_option(e, CURLOPT_BUFFERSIZE, buffer);
    }
    if (a.current.method == "HEAD") set_option(e, CURLOPT_NOBODY, 1L);
    for (const auto& [name, value] : a.current.headers.items())
      a.header_list = append_header(a.header_list, util::concat({name, ": ", value}));
    // The token goes only to the origin it was given for: never after a
    // redirect to another scheme, host or port.
    if (!a.current.bearer_token.empty() && token_allowed(a.current.url, a.url))
      a.header_list = append_header(a.header_list, "Authorization: Bearer " + a.current.bearer_token);
    if (a.current.range_from) {
      std::string range = "Range: bytes=" + std::to_string(*a.current.range_from) + "-";
      if (a.current.range_to) range += std::to_string(*a.current.range_to);
      a.header_list = append_header(a.header_list, range);
    }
    set_option(e, CURLOPT_HTTPHEADER, a.header_list);
    util::log::debug("http", [&] {
      std::string line = a.current.method + " " + redact_url(a.url);
      if (a.current.range_from)
        line += " Range: bytes=" + std::to_string(*a.current.range_from) + "-" +
                (a.current.range_to ? std::to_string(*a.current.range_to) : std::string());
      line += " (attempt " + std::to_string(a.attempt);
      if (a.redirects > 0) line += ", redirect " + std::to_string(a.redirects);
      return line + ")";
    });
    check_multi(curl_multi_add_handle(multi, e), "curl_multi_add_handle");
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
      util::log::debug("http", [&] { return message; });
      if (can_retry) return retry_later(std::move(a), message, std::nullopt);
      // Said before the call: the order of its arguments is unspecified, and one of them takes `a` away.
      std::string failed = message + " (after " + std::to_string(a->attempt) + " attempts)";
      return finish(std::move(a), FailureKind::network, std::move(failed));
    }
    long status = a->hop.status;
    util::log::debug("http", [&] { return "HTTP " + std::to_string(status) + " from " + where; });
    a->response.hops.push_back(a->hop);
    if (a->mode == BodyMode::discard) {  // a redirect to follow
      if (++a->redirects > a->current.max_redirects) {
        std::string failed = "too many redirects (more than " + std::to_string(a->current.max_redirects) + ") from " +
                             redact_url(a->current.url);
        return finish(std::move(a), FailureKind::too_many_redirects, std::move(failed));
      }
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
      start_running(std::move(a));
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
        auto owned = stop_running(*a);
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
          start_running(std::move(a));
        } else {
          ++it;
        }
      }
      if (bandwidth) resume_paused();
      int still = 0;
      check_multi(curl_multi_perform(multi, &still), "curl_multi_perform");
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURLcode code = msg->data.result;
        void* owner = nullptr;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &owner);
        auto* done = static_cast<Active*>(owner);
        if (!done || done->easy != msg->easy_handle) continue;
        auto a = stop_running(*done);
        try {
          completed(std::move(a), code);
        } catch (...) {
          pending_error = std::current_exception();
        }
        if (pending_error) break;
      }
      if (round_end && !pending_error) {
        try {
          round_end();
        } catch (...) {
          pending_error = std::current_exception();
        }
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
        check_multi(curl_multi_poll(multi, nullptr, 0, timeout_ms, nullptr), "curl_multi_poll");
    }
  }
};

Session::Session(Options options) : impl_(std::make_unique<Impl>(options)), options_(std::move(options)) {}
Session::~Session() = default;

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

void Session::on_round_end(std::function<void()> callback) { impl_->round_end = std::move(callback); }

void Session::run() { impl_->run(); }

}  // namespace provkit::http
