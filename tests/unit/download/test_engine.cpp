// The download engine against tiny real servers on loopback (a thread each,
// one response per connection), with a test Source: the engine resolves
// through the source, follows the redirect to a second origin, fetches later
// ranges there directly, asks the source again when the redirect target is
// refused as expired, sends the token only where the source allows it, and
// reports a refusal as the source's typed error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "download/engine.hpp"
#include "hub/source.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/http/token.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

namespace {

using TinyServer = provkit::test::LoopbackServer;

std::string status(int code, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Length: 5\r\nConnection: close\r\n" + extra + "\r\nerror";
}

const std::string kToken = "hf_engineTestToken";

// A source on one origin whose resolve URL redirects elsewhere: a 403 from
// elsewhere is expiry; the token goes to its own origin only.
struct TestSource : download::Source {
  std::string origin_url;
  std::atomic<int> resolves{0};
  std::string resolve(const download::Job& job) override {
    ++resolves;
    return origin_url + "/resolve/" + job.spec.path;
  }
  bool expired(const http::Result& res, const std::string&, const std::string& resolved) const override {
    return res.failure == http::FailureKind::none && res.response.status == 403 &&
           !http::same_origin(res.response.url, resolved);
  }
  std::string expired_note(const http::Result& res) const override {
    return "expired (HTTP " + std::to_string(res.response.status) + ")";
  }
  std::string bearer_token(const std::string& resolved, const std::string& url) const override {
    return http::token_allowed(resolved, url) ? kToken : std::string();
  }
  Error refusal(const download::Job& job, const http::Response& r) const override {
    return Error(download::FileFailure::access_refused,
                 job.spec.path + ": refused with HTTP " + std::to_string(r.status));
  }
};

struct Recorder : download::Observer {
  std::vector<std::string> retries;
  std::size_t ranges = 0;
  void on_start(const download::Job&, std::uint64_t, std::size_t n) override { ranges = n; }
  void on_retry(const download::Job&, const std::string& why, double) override { retries.push_back(why); }
};

using Dir = provkit::test::TempDir;

download::Job job_in(const fs::path& dir, const std::string& content) {
  download::Job j;
  j.spec = {"model.bin", content.size(), util::sha256_hex(content), std::nullopt};
  j.final_path = dir / "blobs" / "model.bin";
  j.partial_path = dir / "blobs" / "model.bin.partial";
  j.rejected_prefix = dir / "blobs" / "model.bin";
  return j;
}

download::Options split_options() {
  download::Options o;
  o.http.retry.tries = 2;
  o.http.retry.backoff_base_s = 0.05;
  o.http.retry.backoff_max_s = 0.1;
  o.connections = 2;
  o.min_split_size = 1000;
  return o;
}

std::string content_of(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7) % 26);
  return s;
}

// A job fetched with split_options() through a TestSource whose origin is a given server, and what the run said.
struct SourceRun {
  TestSource source;
  Recorder rec;
  download::JobResult fetch(const TinyServer& origin, const download::Job& job) {
    source.origin_url = origin.base;
    return download::Downloader(split_options(), source).run({job}, rec).at(0);
  }
};

bool has_token(const provkit::test::SeenRequest& s) {
  return s.headers.find("authorization: bearer hf_enginetesttoken") != std::string::npos;
}

}  // namespace

TEST_CASE("the engine resolves through its source; ranges go to the redirect target, the token never does",
          "[download]") {
  Dir d("resolve");
  std::string content = content_of(6000);
  TinyServer cdn("127.0.0.2",
                 [&](const std::string&, const std::string& h) { return test::ranged_answer(content, h); });
  std::string cdn_base = cdn.base;
  TinyServer origin("127.0.0.1", [&](const std::string&, const std::string&) {
    return status(302, "Location: " + cdn_base + "/blob?sig=1\r\n");
  });
  SourceRun run;
  download::Job job = job_in(d.path, content);
  auto r = run.fetch(origin, job);
  CHECK(r.outcome == download::Outcome::downloaded);
  CHECK(util::read_file(job.final_path) == content);
  CHECK(run.rec.ranges > 1);
  CHECK(run.source.resolves == 1);
  // One request through the origin (the first range); the other ranges went to the CDN directly.
  auto at_origin = origin.seen();
  REQUIRE(at_origin.size() == 1);
  CHECK(has_token(at_origin[0]));
  auto at_cdn = cdn.seen();
  CHECK(at_cdn.size() == run.rec.ranges);
  for (const auto& s : at_cdn) CHECK(s.headers.find("authorization") == std::string::npos);
}

TEST_CASE("an expired redirect target is resolved again through the source and the file carries on", "[download]") {
  Dir d("reresolve");
  std::string content = content_of(3000);
  std::atomic<int> redirects{0};
  TinyServer cdn("127.0.0.2", [&](const std::string& line, const std::string& h) {
    if (line.find("sig=1 ") != std::string::npos) return status(403);  // the first signature has expired
    return test::ranged_answer(content, h);
  });
  std::string cdn_base = cdn.base;
  TinyServer origin("127.0.0.1", [&](const std::string&, const std::string&) {
    return status(302, "Location: " + cdn_base + "/blob?sig=" + std::to_string(++redirects) + "\r\n");
  });
  SourceRun run;
  download::Job job = job_in(d.path, content);
  auto r = run.fetch(origin, job);
  CHECK(r.outcome == download::Outcome::downloaded);
  CHECK(util::read_file(job.final_path) == content);
  CHECK(run.source.resolves == 2);
  REQUIRE(run.rec.retries.size() == 1);
  CHECK(run.rec.retries[0] == "expired (HTTP 403)");
  for (const auto& s : origin.seen()) CHECK(has_token(s));
  for (const auto& s : cdn.seen()) CHECK(s.headers.find("authorization") == std::string::npos);
}

TEST_CASE("a refusal is the source's typed error; the partial file is kept", "[download]") {
  Dir d("refused");
  TinyServer origin("127.0.0.1", [&](const std::string&, const std::string&) { return status(401); });
  SourceRun run;
  download::Job job = job_in(d.path, content_of(100));
  auto r = run.fetch(origin, job);
  CHECK(r.outcome == download::Outcome::failed);
  CHECK(r.reason == ReasonId(download::FileFailure::access_refused));  // the source's own, carried
  CHECK(r.reason->code() == ExitCode::auth);
  CHECK(r.message == "model.bin: refused with HTTP 401");
  CHECK_FALSE(fs::exists(job.final_path));
  CHECK(fs::exists(job.partial_path));
}

TEST_CASE("the token goes only to the origin it was issued for", "[download][http]") {
  CHECK(http::token_allowed("https://huggingface.co/api/x", "https://huggingface.co/org/m/resolve/main/f"));
  CHECK_FALSE(http::token_allowed("https://huggingface.co/x", "https://cdn-lfs.huggingface.co/f"));
  CHECK_FALSE(http::token_allowed("https://huggingface.co/x", "http://huggingface.co/x"));
  CHECK_FALSE(http::token_allowed("https://huggingface.co/x", "https://huggingface.co:8443/x"));
  CHECK_FALSE(http::token_allowed("not a url", "https://huggingface.co/x"));
}

TEST_CASE("HubSource: a 403/410 from the CDN is expiry, from the Hub it is a refusal; the token stays home",
          "[download][hub]") {
  hub::HubSource source({hub::RepoType::model, "org/m"}, hub::Token{kToken, "HF_TOKEN"});
  std::string resolved = "http://127.0.0.1:1/org/m/resolve/abc/f";
  http::Result cdn_refused;
  cdn_refused.response.status = 403;
  cdn_refused.response.url = "http://127.0.0.2:1/blob?sig=1";
  CHECK(source.expired(cdn_refused, resolved, resolved));
  cdn_refused.response.status = 410;
  CHECK(source.expired(cdn_refused, cdn_refused.response.url, resolved));
  http::Result hub_refused;
  hub_refused.response.status = 403;
  hub_refused.response.url = resolved;
  CHECK_FALSE(source.expired(hub_refused, resolved, resolved));
  cdn_refused.response.status = 404;
  CHECK_FALSE(source.expired(cdn_refused, resolved, resolved));
  CHECK(source.bearer_token(resolved, resolved) == kToken);
  CHECK(source.bearer_token(resolved, "http://127.0.0.2:1/blob").empty());
  download::Job job;
  job.spec.path = "f";
  http::Response denied;
  denied.status = 401;
  CHECK(source.refusal(job, denied).code() == ExitCode::auth);
}
