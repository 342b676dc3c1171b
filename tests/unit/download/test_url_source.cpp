// download::UrlSource and fetch_url_file against tiny real servers on
// loopback: a plain URL asked as it is, redirects followed, nothing expired,
// the token only to its own origin, refusals typed by status; the size of a
// file nothing stated learned from the answer to a request for its first
// byte; a file resumed from its partial file, and a wrong one refused with
// nothing of it left.
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>

#include "provkit/download/url_source.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "support/loopback_server.hpp"
#include "support/reason_of.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

namespace {

using Server = provkit::test::LoopbackServer;
using Dir = provkit::test::TempDir;

std::string answer(int code, const std::string& extra = "", const std::string& body = "error") {
  return "HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n" + extra + "\r\n" + body;
}

std::string content_of(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7) % 26);
  return s;
}

http::Options quick() {
  http::Options o;
  o.retry.tries = 2;
  o.retry.backoff_base_s = 0.01;
  o.retry.backoff_max_s = 0.02;
  return o;
}

download::UrlFile file_in(const Dir& d, const std::string& url) {
  download::UrlFile f;
  f.url = url;
  f.final_path = d / "wheels" / "w.whl";
  f.partial_path = d / "tmp" / "w.whl.partial";
  f.lock_path = d / "locks" / "w.whl.lock";
  f.root = d.path;
  return f;
}

download::Options options() {
  download::Options o;
  o.http = quick();
  return o;
}

}  // namespace

TEST_CASE("UrlSource: the job's URL as it is, never expired, refusals typed by status", "[download][url_source]") {
  download::UrlSource source;
  download::Job job;
  job.url = "https://files.example/a/w-1.0-py3-none-any.whl";
  CHECK(source.resolve(job) == job.url);
  http::Result refused;
  refused.response.status = 403;
  refused.response.url = "https://cdn.example/other";
  CHECK_FALSE(source.expired(refused, job.url, job.url));  // a 403 from elsewhere is not the Hub's expiry
  auto refusal = [&](long status) {
    http::Response r;
    r.status = status;
    return source.refusal(job, r);
  };
  using download::FileFailure;
  for (long status : {401L, 403L}) {
    CHECK(refusal(status).is(FileFailure::access_refused));
    CHECK(refusal(status).code() == ExitCode::auth);
  }
  for (long status : {404L, 410L}) {
    CHECK(refusal(status).is(FileFailure::not_found));
    CHECK(refusal(status).code() == ExitCode::check_failed);
  }
  for (long status : {500L, 429L}) {
    CHECK(refusal(status).is(FileFailure::server_error));
    CHECK(refusal(status).code() == ExitCode::network);
  }
  CHECK(refusal(404).reason().name() == "check_failed");  // the --json name these always had
  CHECK(std::string(source.refusal(job.url, 404).what()).find("files.example/a/w-1.0") != std::string::npos);
}

TEST_CASE("UrlSource: the token goes only to its own origin", "[download][url_source]") {
  CHECK(download::UrlSource().bearer_token("https://idx.example/s", "https://idx.example/s").empty());
  download::UrlSource source("secret", "https://idx.example/simple/");
  CHECK(source.bearer_token("https://idx.example/f/w.whl", "https://idx.example/f/w.whl") == "secret");
  CHECK(source.bearer_token("https://idx.example/f/w.whl", "https://cdn.example/f/w.whl").empty());
  CHECK(source.bearer_token("https://idx.example/f/w.whl", "http://idx.example/f/w.whl").empty());
  CHECK(source.bearer_token("https://idx.example/f/w.whl", "https://idx.example:8443/f/w.whl").empty());
}

TEST_CASE("UrlSource::size_of: from Content-Range's total, or Content-Length where ranges are ignored",
          "[download][url_source]") {
  std::string content = content_of(12345);
  Server ranges("127.0.0.1", [&](const std::string&, const std::string& h) { return test::ranged_answer(content, h); });
  CHECK(download::UrlSource().size_of(ranges.base + "/w.whl", quick()) == 12345);
  auto seen = ranges.seen();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].request_line.rfind("GET ", 0) == 0);
  CHECK(seen[0].headers.find("range: bytes=0-0") != std::string::npos);

  Server whole("127.0.0.1", [&](const std::string&, const std::string&) { return answer(200, "", content); });
  CHECK(download::UrlSource().size_of(whole.base + "/w.whl", quick()) == 12345);

  Server empty("127.0.0.1",
               [&](const std::string&, const std::string&) { return answer(416, "Content-Range: bytes */0\r\n", ""); });
  CHECK(download::UrlSource().size_of(empty.base + "/w.whl", quick()) == 0);
}

TEST_CASE("UrlSource::size_of: redirects followed, refusals typed, no size stated is a network failure",
          "[download][url_source]") {
  std::string content = content_of(777);
  Server target("127.0.0.2", [&](const std::string&, const std::string& h) { return test::ranged_answer(content, h); });
  std::string target_base = target.base;
  Server origin("127.0.0.1", [&](const std::string& line, const std::string&) {
    if (line.find("/missing") != std::string::npos) return answer(404);
    if (line.find("/private") != std::string::npos) return answer(401);
    if (line.find("/broken") != std::string::npos) return answer(500);
    if (line.find("/nolength") != std::string::npos)
      return std::string("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody");
    return answer(302, "Location: " + target_base + "/blob\r\n", "");
  });
  download::UrlSource source;
  CHECK(source.size_of(origin.base + "/w.whl", quick()) == 777);
  using download::FileFailure;
  CHECK(test::reason_of([&] { source.size_of(origin.base + "/missing", quick()); }) == FileFailure::not_found);
  CHECK(test::reason_of([&] { source.size_of(origin.base + "/private", quick()); }) == FileFailure::access_refused);
  CHECK(test::reason_of([&] { source.size_of(origin.base + "/broken", quick()); }) == FileFailure::server_error);
  CHECK(test::reason_of([&] { source.size_of(origin.base + "/nolength", quick()); }) == FileFailure::no_size);
}

TEST_CASE("fetch_url_file: a size nothing stated is learned first; the sha256 is returned", "[download][url_source]") {
  Dir d("url-fetch");
  std::string content = content_of(5000);
  Server server("127.0.0.1", [&](const std::string&, const std::string& h) { return test::ranged_answer(content, h); });
  download::UrlSource source;
  download::Observer quiet;
  download::UrlFile f = file_in(d, server.base + "/w.whl");
  CHECK(download::fetch_url_file(f, options(), source, quiet) == util::sha256_hex(content));
  CHECK(util::read_file(f.final_path) == content);
  CHECK_FALSE(fs::exists(f.partial_path));
  auto seen = server.seen();
  REQUIRE(seen.size() == 2);  // the first byte (its size), then the file
  CHECK(seen[0].headers.find("range: bytes=0-0") != std::string::npos);
  CHECK(seen[1].headers.find("range: bytes=0-0") == std::string::npos);
}

TEST_CASE("fetch_url_file: a partial file is resumed with a range request", "[download][url_source]") {
  Dir d("url-resume");
  std::string content = content_of(8000);
  Server server("127.0.0.1", [&](const std::string&, const std::string& h) { return test::ranged_answer(content, h); });
  download::UrlSource source;
  download::Observer quiet;
  download::UrlFile f = file_in(d, server.base + "/w.whl");
  f.sha256 = util::sha256_hex(content);
  f.size = content.size();
  d.write("tmp/w.whl.partial", content.substr(0, 3000));  // what a killed run left
  CHECK(download::fetch_url_file(f, options(), source, quiet) == *f.sha256);
  CHECK(util::read_file(f.final_path) == content);
  auto seen = server.seen();
  REQUIRE(seen.size() == 1);  // the size was known: no probe
  CHECK(seen[0].headers.find("range: bytes=3000-") != std::string::npos);
}

TEST_CASE("fetch_url_file: a wrong sha256 or size is refused and nothing of it is kept", "[download][url_source]") {
  Dir d("url-wrong");
  std::string content = content_of(4000);
  Server server("127.0.0.1", [&](const std::string&, const std::string& h) { return test::ranged_answer(content, h); });
  download::UrlSource source;
  download::Observer quiet;
  download::UrlFile f = file_in(d, server.base + "/w.whl");
  f.sha256 = std::string(64, '1');
  f.size = content.size();
  try {
    download::fetch_url_file(f, options(), source, quiet);
    FAIL("a wrong sha256 was accepted");
  } catch (const Error& e) {
    CHECK(e.is(download::FileFailure::mismatch));
    CHECK(e.code() == ExitCode::check_failed);
    CHECK(std::string(e.what()).find(util::sha256_hex(content)) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(f.final_path));
  for (const auto& entry : fs::directory_iterator(d / "tmp")) FAIL("left behind: " << entry.path());

  f.sha256.reset();
  f.size = 10;  // the server has more
  try {
    download::fetch_url_file(f, options(), source, quiet);
    FAIL("a wrong size was accepted");
  } catch (const Error& e) {
    CHECK(e.is(download::FileFailure::wrong_size));  // the server's total, told before a byte is taken
    CHECK(e.code() == ExitCode::check_failed);
    CHECK(std::string(e.what()).find("10 bytes") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(f.final_path));
}

TEST_CASE("fetch_url_file: a refusal is the source's typed error naming the URL", "[download][url_source]") {
  Dir d("url-refused");
  Server server("127.0.0.1", [&](const std::string&, const std::string&) { return answer(403); });
  download::UrlSource source;
  download::Observer quiet;
  download::UrlFile f = file_in(d, server.base + "/private/w.whl");
  f.size = 100;
  try {
    download::fetch_url_file(f, options(), source, quiet);
    FAIL("a refusal was accepted");
  } catch (const Error& e) {
    CHECK(e.is(download::FileFailure::access_refused));  // carried from the engine's result
    CHECK(e.code() == ExitCode::auth);
    CHECK(std::string(e.what()).find("/private/w.whl: access refused (HTTP 403)") != std::string::npos);
  }
}
