#include <catch2/catch.hpp>

#include "provkit/http/http.hpp"

using namespace provkit::http;

TEST_CASE("headers are looked up without regard to case, last value wins", "[http]") {
  Headers h;
  h.add("Content-Length", "10");
  h.add("X-Linked-Etag", "\"abc\"");
  h.add("content-length", "12");
  CHECK(h.get("CONTENT-LENGTH") == "12");
  CHECK(h.get("x-linked-etag") == "\"abc\"");
  CHECK_FALSE(h.get("location"));
}

TEST_CASE("raw header lines", "[http]") {
  std::string n, v;
  CHECK(parse_header_line("ETag:  \"x\" \r\n", n, v));
  CHECK(n == "ETag");
  CHECK(v == "\"x\"");
  CHECK(parse_header_line("Location: http://a:1/b?c=d:e\r\n", n, v));
  CHECK(v == "http://a:1/b?c=d:e");
  CHECK_FALSE(parse_header_line("HTTP/1.1 200 OK\r\n", n, v));
  CHECK_FALSE(parse_header_line("\r\n", n, v));
  CHECK_FALSE(parse_header_line("no colon here\r\n", n, v));
}

TEST_CASE("Link rel=next", "[http]") {
  CHECK(parse_link_next("<https://hub/api/models/a/b/tree/main?recursive=1&cursor=xyz>; rel=\"next\"") ==
        "https://hub/api/models/a/b/tree/main?recursive=1&cursor=xyz");
  CHECK(parse_link_next("<https://h/1>; rel=\"prev\", <https://h/3>; rel=\"next\"") == "https://h/3");
  CHECK(parse_link_next("<https://h/3>;rel=next") == "https://h/3");
  CHECK(parse_link_next("<https://h/3>; REL=\"last next\"") == "https://h/3");
  CHECK(parse_link_next("<https://h/a,b>; rel=\"next\"") == "https://h/a,b");
  CHECK_FALSE(parse_link_next("<https://h/1>; rel=\"prev\""));
  CHECK_FALSE(parse_link_next(""));
  CHECK_FALSE(parse_link_next("<unterminated; rel=next"));
}

TEST_CASE("Content-Range", "[http]") {
  auto r = parse_content_range("bytes 100-199/1000");
  REQUIRE(r);
  CHECK(r->first == 100);
  CHECK(r->last == 199);
  CHECK(r->total == 1000u);
  auto star = parse_content_range("bytes 0-0/*");
  REQUIRE(star);
  CHECK_FALSE(star->total);
  CHECK_FALSE(parse_content_range("bytes */1000"));     // the 416 form has no range
  CHECK_FALSE(parse_content_range("bytes 10-5/100"));   // last before first
  CHECK_FALSE(parse_content_range("bytes 0-100/100"));  // last beyond the end
  CHECK_FALSE(parse_content_range("items 0-1/2"));
  CHECK_FALSE(parse_content_range("bytes -1-2/3"));
}

TEST_CASE("Retry-After as seconds or HTTP-date", "[http]") {
  CHECK(parse_retry_after("120") == Approx(120.0));
  CHECK(parse_retry_after(" 0 ") == Approx(0.0));
  auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  CHECK(*parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now) == Approx(10.0));
  CHECK(*parse_retry_after("Sun, 06 Nov 1994 08:49:27 GMT", now) == Approx(0.0));  // in the past: now
  // The obsolete forms RFC 9110 5.6.7 says a recipient must accept too.
  CHECK(*parse_retry_after("Sunday, 06-Nov-94 08:49:47 GMT", now) == Approx(10.0));
  CHECK(*parse_retry_after("Sun Nov  6 08:49:47 1994", now) == Approx(10.0));
  CHECK_FALSE(parse_retry_after("Sun, 06 Nov 1310 08:49:37 GMT", now));  // no date curl can hold
  CHECK_FALSE(parse_retry_after("soon"));
  CHECK_FALSE(parse_retry_after("-5"));
}

TEST_CASE("RateLimit reset in seconds", "[http]") {
  // The IETF draft's `"policy";r=0;t=172` (t) or the older `limit=10, remaining=0, reset=5` (reset).
  CHECK(parse_ratelimit("\"resolvers\";r=0;t=172")->reset_s == Approx(172.0));  // as the Hub sends it
  CHECK(parse_ratelimit("limit=10, remaining=0, reset=5")->reset_s == Approx(5.0));
  CHECK_FALSE(parse_ratelimit("\"resolvers\";r=0"));
  CHECK_FALSE(parse_ratelimit("t=soon"));
}

TEST_CASE("RateLimit and RateLimit-Policy: remaining, reset, quota", "[http]") {
  // As the Hub sends them: the policy names its kind first, then the limit it is for.
  auto hub = parse_ratelimit("\"resolvers\";r=12;t=172", "\"fixed window\";\"resolvers\";q=3000;w=300");
  REQUIRE(hub);
  CHECK(hub->remaining == 12);
  CHECK(hub->reset_s == Approx(172));
  CHECK(hub->quota == 3000u);
  // Several limits: the one that asks for the longest wait.
  auto two = parse_ratelimit("\"api\";r=400;t=100, \"resolvers\";r=0;t=30",
                             "\"api\";q=500;w=300, \"resolvers\";q=3000;w=300");
  REQUIRE(two);
  CHECK(two->remaining == 0);
  CHECK(two->reset_s == Approx(30));
  CHECK(two->quota == 3000u);
  // The older draft; limit is the quota.
  auto old = parse_ratelimit("limit=100, remaining=4, reset=20");
  REQUIRE(old);
  CHECK(old->remaining == 4);
  CHECK(old->reset_s == Approx(20));
  CHECK(old->quota == 100u);
  // No reset given: at worst the policy's window.
  auto no_t = parse_ratelimit("\"a\";r=0", "\"a\";q=10;w=60");
  REQUIRE(no_t);
  CHECK(no_t->reset_s == Approx(60));
  // A policy for another limit does not count; a lone unnamed one does.
  CHECK_FALSE(parse_ratelimit("\"a\";r=5;t=10", "\"b\";q=10;w=60, \"c\";q=20;w=60")->quota);
  CHECK(parse_ratelimit("r=5;t=10", "q=1000;w=60")->quota == 1000u);
  CHECK(parse_ratelimit("\"a\";r=1;t=1.5")->reset_s == Approx(1.5));
  CHECK_FALSE(parse_ratelimit("\"a\";r=x;t=10"));
  CHECK_FALSE(parse_ratelimit("\"a\";r=-1;t=10"));
  CHECK_FALSE(parse_ratelimit(""));
  CHECK_FALSE(parse_ratelimit("\"a;r=0;t=10\""));  // all inside a string
}

TEST_CASE("RateLimit: how long to wait before the next request", "[http]") {
  CHECK(ratelimit_spacing_s({0, 30, 3000}) == Approx(30));         // none left: until the reset
  CHECK(ratelimit_spacing_s({300, 30, 3000}) == Approx(0.1));      // 10% of the quota left: spread them out
  CHECK(ratelimit_spacing_s({301, 30, 3000}) == Approx(0));        // more: no pacing
  CHECK(ratelimit_spacing_s({9, 18, std::nullopt}) == Approx(2));  // no quota known: fewer than 10 is low
  CHECK(ratelimit_spacing_s({10, 18, std::nullopt}) == Approx(0));
}

TEST_CASE("RateLimit pacing per origin", "[http]") {
  using namespace std::chrono_literals;
  RateLimitPacer p;
  auto t0 = std::chrono::steady_clock::time_point(1000s);
  CHECK_FALSE(p.try_start("http://a:1", t0));
  // Nothing left for 2 s: no request to that origin before, others untouched.
  p.observe("http://a:1", {0, 2, std::nullopt}, t0, 300);
  REQUIRE(p.try_start("http://a:1", t0 + 1s));
  CHECK(*p.try_start("http://a:1", t0 + 1s) == t0 + 2s);
  CHECK_FALSE(p.try_start("http://b:1", t0 + 1s));
  CHECK_FALSE(p.try_start("http://a:1", t0 + 2s));
  // Few left: 4 requests in 8 s, so 2 s apart (counted from the last start).
  p.observe("http://a:1", {4, 8, 100}, t0 + 2500ms, 300);
  CHECK(*p.try_start("http://a:1", t0 + 3s) == t0 + 4s);
  CHECK_FALSE(p.try_start("http://a:1", t0 + 4s));
  CHECK(*p.try_start("http://a:1", t0 + 5s) == t0 + 6s);
  CHECK_FALSE(p.try_start("http://a:1", t0 + 6s));
  // Once the window has reset, no more spacing.
  CHECK_FALSE(p.try_start("http://a:1", t0 + 11s));
  CHECK_FALSE(p.try_start("http://a:1", t0 + 11s));
  // Plenty left again lifts the spacing.
  p.observe("http://a:1", {1, 10, std::nullopt}, t0 + 20s, 300);
  CHECK(p.try_start("http://a:1", t0 + 20s));
  p.observe("http://a:1", {50, 10, std::nullopt}, t0 + 20s, 300);
  CHECK_FALSE(p.try_start("http://a:1", t0 + 25s));
  CHECK_FALSE(p.try_start("http://a:1", t0 + 25s + 1ms));
  // A wait is never longer than the cap.
  p.observe("http://a:1", {0, 86400, std::nullopt}, t0 + 40s, 300);
  CHECK(*p.try_start("http://a:1", t0 + 41s) == t0 + 340s);
}

TEST_CASE("token bucket: rate, burst and debt", "[http]") {
  using namespace std::chrono_literals;
  auto t0 = std::chrono::steady_clock::time_point(1000s);
  TokenBucket b(1000, 100, t0);  // 1000 B/s, 100 B burst
  CHECK(b.has_tokens(t0));
  CHECK(b.wait(t0) == std::chrono::steady_clock::duration::zero());
  b.take(100);
  CHECK_FALSE(b.has_tokens(t0));
  CHECK(b.wait(t0) > 0ms);
  CHECK(b.wait(t0) <= 2ms);
  // A chunk bigger than what is left overdraws it; the debt is paid first.
  CHECK(b.has_tokens(t0 + 10ms));  // 10 tokens back
  b.take(510);                     // 500 in debt
  CHECK_FALSE(b.has_tokens(t0 + 10ms));
  auto w = b.wait(t0 + 10ms);
  CHECK(w >= 500ms);
  CHECK(w <= 502ms);
  CHECK(b.has_tokens(t0 + 10ms + w));
  // Idle time saves up no more than the burst.
  CHECK(b.has_tokens(t0 + 100s));
  CHECK(b.tokens() == Approx(100));
}

TEST_CASE("token bucket: a greedy taker gets the rate, plus at most a burst and a chunk", "[http]") {
  using namespace std::chrono_literals;
  auto t0 = std::chrono::steady_clock::time_point(1000s);
  const double rate = 2 << 20, burst = rate / 10;
  const std::uint64_t chunk = 200 * 1024;
  TokenBucket b(rate, burst, t0);
  std::uint64_t got = 0;
  auto t = t0;
  while (t < t0 + 10s) {
    if (b.has_tokens(t)) {
      b.take(chunk);
      got += chunk;
    } else {
      t += b.wait(t);
    }
  }
  CHECK(static_cast<double>(got) <= rate * 10 + burst + chunk);
  CHECK(static_cast<double>(got) >= rate * 10 - chunk);
}

TEST_CASE("URLs and origins", "[http]") {
  auto u = Url::parse("HTTPS://User:Secret@Hub.Example:8443/api/x?y=1#frag");
  REQUIRE(u);
  CHECK(u->scheme == "https");
  CHECK(u->host == "hub.example");
  CHECK(u->port == 8443);
  CHECK(u->userinfo == "User:Secret");
  CHECK(u->target == "/api/x?y=1");
  CHECK(u->origin() == "https://hub.example:8443");
  CHECK(Url::parse("http://127.0.0.1")->origin() == "http://127.0.0.1:80");
  CHECK(Url::parse("https://h/")->origin() == Url::parse("https://h:443/x")->origin());
  CHECK(Url::parse("http://h/")->origin() != Url::parse("https://h/")->origin());
  CHECK(Url::parse("http://127.0.0.1:5/")->origin() != Url::parse("http://127.0.0.2:5/")->origin());
  CHECK(Url::parse("http://[::1]:8080/x")->host == "::1");
  CHECK_FALSE(Url::parse("ftp://h/x"));
  CHECK_FALSE(Url::parse("http://h:99999/"));
  CHECK_FALSE(Url::parse("/relative"));
}

TEST_CASE("redirect locations resolve against the URL they came from", "[http]") {
  std::string base = "http://hub:1/org/name/resolve/main/a/b.json?x=1";
  CHECK(resolve_reference(base, "https://cdn.example/blob?sig=2") == "https://cdn.example/blob?sig=2");
  CHECK(resolve_reference(base, "//cdn:2/blob") == "http://cdn:2/blob");
  CHECK(resolve_reference(base, "/api/resolve-cache/models/org/name/c/a%2Fb.json") ==
        "http://hub:1/api/resolve-cache/models/org/name/c/a%2Fb.json");
  CHECK(resolve_reference(base, "c.json") == "http://hub:1/org/name/resolve/main/a/c.json");
  CHECK(resolve_reference(base, "../x") == "http://hub:1/org/name/resolve/main/x");
  CHECK(resolve_reference(base, "?y=2") == "http://hub:1/org/name/resolve/main/a/b.json?y=2");
  CHECK(resolve_reference("http://hub:1/a/b", "/c/./d/../e?q") == "http://hub:1/c/e?q");
}

TEST_CASE("URLs in messages carry no credentials", "[http]") {
  CHECK(redact_url("https://user:hf_secret@h:1/p?token=hf_secret#f") == "https://h:1/p");
  CHECK(redact_url("http://cdn/blob?X-Amz-Signature=abc") == "http://cdn/blob");
  CHECK(redact_url("http://h/p") == "http://h/p");
}

TEST_CASE("retry policy: which answers, how long", "[http]") {
  for (long s : {408L, 429L, 500L, 502L, 503L, 504L}) CHECK(RetryPolicy::retryable_status(s));
  for (long s : {200L, 206L, 301L, 400L, 401L, 403L, 404L, 416L}) CHECK_FALSE(RetryPolicy::retryable_status(s));
  RetryPolicy p;
  p.backoff_base_s = 1;
  p.backoff_max_s = 8;
  CHECK(p.delay_s(1) == Approx(1));
  CHECK(p.delay_s(2) == Approx(2));
  CHECK(p.delay_s(3) == Approx(4));
  CHECK(p.delay_s(4) == Approx(8));
  CHECK(p.delay_s(10) == Approx(8));
  CHECK(p.delay_s(1, 30.0) == Approx(30));  // Retry-After replaces the backoff
  p.retry_after_max_s = 20;
  CHECK(p.delay_s(1, 3600.0) == Approx(20));
  p.honour_retry_after = false;
  CHECK(p.delay_s(2, 30.0) == Approx(2));
}
