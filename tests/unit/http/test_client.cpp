// The HTTP client against a tiny real server on loopback (a thread in this
// process, one response per connection): redirects and where the token goes,
// retries, Retry-After, redirect loops, the simple get/download_to_file API.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>

#include "provkit/error.hpp"
#include "provkit/http/http.hpp"
#include "provkit/util/fs.hpp"

#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::http;

namespace {

using TinyServer = provkit::test::LoopbackServer;

std::string ok(const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n" + extra +
         "\r\n" + body;
}
std::string status(int code, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Length: 5\r\nConnection: close\r\n" + extra + "\r\nerror";
}

Options fast() {
  Options o;
  o.retry.backoff_base_s = 0.05;
  o.retry.backoff_max_s = 0.1;
  o.retry.tries = 3;
  return o;
}

const std::string kToken = "hf_unitTestToken";

}  // namespace

TEST_CASE("the token follows same-origin redirects and never another origin", "[http]") {
  // The "CDN" is another host (127.0.0.2), as on the real Hub.
  TinyServer cdn("127.0.0.2", [](const std::string&, const std::string&) { return ok("blob bytes"); });
  std::string cdn_base = cdn.base;
  TinyServer hub("127.0.0.1", [&](const std::string& line, const std::string&) {
    if (line.find(" /start ") != std::string::npos) return status(307, "Location: /relative/next\r\n");
    return status(302, "Location: " + cdn_base + "/blob?sig=1\r\n");
  });
  Client client(fast());
  Request req;
  req.url = hub.base + "/start";
  req.bearer_token = kToken;
  Result r = client.fetch(req);
  CHECK(r.ok());
  CHECK(r.response.body == "blob bytes");
  REQUIRE(r.response.hops.size() == 3);
  CHECK(r.response.hops[0].status == 307);
  CHECK(r.response.hops[1].status == 302);
  CHECK(r.response.url == cdn.base + "/blob?sig=1");
  auto hub_seen = hub.seen();
  REQUIRE(hub_seen.size() == 2);
  CHECK(hub_seen[1].request_line.find("/relative/next") != std::string::npos);
  for (const auto& s : hub_seen) CHECK(s.headers.find("authorization: bearer hf_unittesttoken") != std::string::npos);
  auto cdn_seen = cdn.seen();
  REQUIRE(cdn_seen.size() == 1);
  CHECK(cdn_seen[0].headers.find("authorization") == std::string::npos);
}

TEST_CASE("another port on the same host is another origin", "[http]") {
  TinyServer other("127.0.0.1", [](const std::string&, const std::string&) { return ok("x"); });
  std::string target = other.base;
  TinyServer hub("127.0.0.1",
                 [&](const std::string&, const std::string&) { return status(302, "Location: " + target + "/x\r\n"); });
  Request req;
  req.url = hub.base + "/a";
  req.bearer_token = kToken;
  CHECK(Client(fast()).fetch(req).ok());
  CHECK(other.seen().at(0).headers.find("authorization") == std::string::npos);
}

TEST_CASE("5xx and 429 are retried; Retry-After is honoured", "[http]") {
  std::atomic<int> n{0};
  TinyServer s("127.0.0.1", [&](const std::string&, const std::string&) {
    int i = n++;
    if (i == 0) return status(503);
    if (i == 1) return status(429, "Retry-After: 1\r\n");
    return ok("fine");
  });
  int retries = 0;
  Session session(fast());
  Result out;
  Transfer t;
  t.request.url = s.base + "/x";
  t.on_retry = [&](const std::string& why, double) {
    ++retries;
    CHECK_THAT(why, Catch::Contains("HTTP"));
  };
  t.on_done = [&](Result& r) { out = r; };
  session.add(std::move(t));
  session.run();
  CHECK(out.response.status == 200);
  CHECK(out.response.attempts == 3);
  CHECK(retries == 2);
  auto seen = s.seen();
  REQUIRE(seen.size() == 3);
  CHECK(seen[2].when - seen[1].when >= std::chrono::milliseconds(950));  // Retry-After: 1, not the 0.1 s backoff
}

TEST_CASE("4xx answers are final; exhausted retries give the last answer", "[http]") {
  std::atomic<int> n{0};
  TinyServer s("127.0.0.1", [&](const std::string& line, const std::string&) {
    ++n;
    return line.find("/missing") != std::string::npos ? status(404, "X-Error-Code: EntryNotFound\r\n") : status(500);
  });
  Client client(fast());
  Request missing;
  missing.url = s.base + "/missing";
  Result r = client.fetch(missing);
  CHECK(r.response.status == 404);
  CHECK(r.response.headers.get("x-error-code") == "EntryNotFound");
  CHECK(r.response.body == "error");
  CHECK(n == 1);
  Request broken;
  broken.url = s.base + "/broken";
  Result r2 = client.fetch(broken);
  CHECK(r2.response.status == 500);
  CHECK(r2.response.attempts == 3);
  CHECK_THROWS_AS(client.get(s.base + "/broken"), Error);
}

TEST_CASE("a redirect loop ends with a clear failure", "[http]") {
  TinyServer s("127.0.0.1", [](const std::string&, const std::string&) { return status(302, "Location: /again\r\n"); });
  Session session(fast());
  Result out;
  Transfer t;
  t.request.url = s.base + "/start?secret=hf_x";
  t.request.max_redirects = 5;
  t.on_done = [&](Result& r) { out = r; };
  session.add(std::move(t));
  session.run();
  CHECK(out.failure == FailureKind::too_many_redirects);
  CHECK_THAT(out.message, Catch::Contains("too many redirects"));
  CHECK_THAT(out.message, !Catch::Contains("hf_x"));
  CHECK(s.seen().size() == 6);
}

TEST_CASE("connection failures are retried, then reported without credentials", "[http]") {
  int port;
  {
    TinyServer gone("127.0.0.1", [](const std::string&, const std::string&) { return ok(""); });
    port = std::stoi(gone.base.substr(gone.base.rfind(':') + 1));
  }
  Client client(fast());
  try {
    client.get("http://user:hf_secret@127.0.0.1:" + std::to_string(port) + "/x?token=hf_secret");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::network);
    CHECK(e.is(TransportFailure::no_answer));  // nothing answered: typed, for a caller that can do without it
    CHECK_THAT(e.what(), Catch::Contains("127.0.0.1:" + std::to_string(port)) && Catch::Contains("3 attempts"));
    CHECK_THAT(e.what(), !Catch::Contains("hf_secret"));
  }
}

TEST_CASE("simple API: get and download_to_file", "[http]") {
  std::atomic<int> n{0};
  TinyServer s("127.0.0.1", [&](const std::string&, const std::string&) {
    return n++ == 0 ? "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\npartial" : ok("index body");
  });
  Client client(fast());
  // The first answer is cut short (7 of 100 bytes): retried, and the file holds only the full answer.
  provkit::test::TempDir tmp("http-simple");
  const std::filesystem::path& dir = tmp.path;
  client.download_to_file(s.base + "/simple/pkg/", dir / "sub" / "index.html");
  CHECK(util::read_file(dir / "sub" / "index.html") == "index body");
  CHECK(std::distance(std::filesystem::directory_iterator(dir / "sub"), std::filesystem::directory_iterator()) == 1);
  CHECK(client.get(s.base + "/again") == "index body");
}

TEST_CASE("a body kept in memory is capped: one failure, no retry", "[http]") {
  TinyServer s("127.0.0.1", [&](const std::string&, const std::string&) { return ok(std::string(5000, 'x')); });
  Options o = fast();
  o.max_body_bytes = 4096;
  Client client(o);
  try {
    client.fetch(Request{.url = s.base + "/api/big?secret=1"});
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::network);
    CHECK_FALSE(e.is(TransportFailure::no_answer));  // an answer came, and was refused
    CHECK(std::string(e.what()) == s.base + "/api/big: the answer is longer than the 4096 bytes allowed for it");
  }
  CHECK(s.seen().size() == 1);
  o.max_body_bytes = 5000;
  CHECK(Client(o).get(s.base + "/api/big").size() == 5000);
}

TEST_CASE("a header value or token with CR, LF or NUL is refused before anything is sent", "[http]") {
  TinyServer s("127.0.0.1", [&](const std::string&, const std::string&) { return ok("fine"); });
  Client client(fast());
  Request with_token{.url = s.base + "/x"};
  with_token.bearer_token = "hf_x\r\nX-Injected: yes";
  CHECK_THROWS_AS(client.fetch(with_token), Error);
  Request with_header{.url = s.base + "/x"};
  with_header.headers.add("X-Note", std::string("a\0b", 3));
  CHECK_THROWS_AS(client.fetch(with_header), Error);
  CHECK(s.seen().empty());
  CHECK(is_safe_header_value("Bearer hf_abc"));
  CHECK_FALSE(is_safe_header_value("a\nb"));
}

TEST_CASE("a Location with a space is followed percent-encoded, as curl and browsers do", "[http]") {
  TinyServer s("127.0.0.1", [&](const std::string& line, const std::string&) {
    if (line.starts_with("GET /from "))
      return std::string("HTTP/1.1 302 Found\r\nLocation: /to a b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    return ok("arrived");
  });
  Client client(fast());
  CHECK(client.get(s.base + "/from") == "arrived");
  auto seen = s.seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].request_line == "GET /to%20a%20b HTTP/1.1");
}

TEST_CASE("an option libcurl refuses stops the run with CurlError; nothing is sent", "[http]") {
  TinyServer s("127.0.0.1", [&](const std::string&, const std::string&) { return ok("fine"); });
  Options o = fast();
  o.connect_timeout_s = -1;  // CURLOPT_CONNECTTIMEOUT takes no negative value
  Client client(o);
  try {
    client.get(s.base + "/x");
    FAIL("no error");
  } catch (const CurlError& e) {
    CHECK(e.call == "CURLOPT_CONNECTTIMEOUT");
    CHECK(e.curl_code == 43);  // CURLE_BAD_FUNCTION_ARGUMENT
    CHECK(e.code() == ExitCode::network);
  }
  CHECK(s.seen().empty());
}
