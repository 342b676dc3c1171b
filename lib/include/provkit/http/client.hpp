#pragma once
// The HTTP client: requests, responses, options, and the Session (one curl
// multi handle, one loop) that carries transfers; Client for single calls.
// See http.hpp for the policies (retries, redirects, tokens, politeness).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/http/headers.hpp"
#include "provkit/http/retry.hpp"

namespace provkit::http {

struct Request {
  std::string method = "GET";  // GET or HEAD
  std::string url;
  Headers headers;                          // extra request headers (never Authorization: use bearer_token)
  std::string bearer_token;                 // sent as Authorization only to the origin of `url`
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
  Headers headers;        // of the final hop
  std::string body;       // kept for non-2xx answers (capped) and, in Client::fetch, for 2xx
  std::string url;        // final URL
  std::vector<Hop> hops;  // every hop, redirects first, final last
  int attempts = 0;
};

// Why a transfer did not produce a final HTTP answer.
enum class FailureKind { none, network, too_many_redirects, bad_redirect, aborted };

// Client's Error for FailureKind::network: no answer came back at all (refused, reset, name not resolved, a
// connect or stall timeout, TLS), after the retries. The shared reason "network" (exit 3), typed so that a
// caller can tell "nothing answered" from an answer it refuses.
enum class TransportFailure { no_answer };
std::string_view reason_name(TransportFailure f);
ExitCode exit_code(TransportFailure f);

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

// libcurl refused to set up or drive a transfer (an option it does not take, a
// handle it could not make, out of memory): Session::run stops with this.
// `call` names what failed ("CURLOPT_PROTOCOLS_STR", "curl_multi_add_handle"),
// `curl_code` is curl's CURLcode or CURLMcode.
struct CurlError : Error {
  CurlError(std::string what_failed, int code, const std::string& why)
      : Error(ExitCode::network, "libcurl refused " + what_failed + ": " + why),
        call(std::move(what_failed)),
        curl_code(code) {}
  std::string call;
  int curl_code;
};

// Thrown from on_head/on_body to fail only that transfer (FailureKind::aborted,
// message = what()); any other exception aborts Session::run as a whole. An
// Error like every library exception (Reason::check_failed), caught by the
// session before anything else sees it.
struct Abort : Error {
  explicit Abort(const std::string& why) : Error(Reason::check_failed, why) {}
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
  // Called after each round of reads (curl_multi_perform) in run(): where
  // body bytes a caller gathers from on_body are written, so that none wait
  // in memory while the connections are quiet.
  void on_round_end(std::function<void()> callback);
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
