// One hf-fetch run over the snapshot steps (hub::fetch_snapshot) without the network: --verify-only and
// --offline on a real cache in a temp directory, and the summary's JSON fields for each way a run ends.
#include <algorithm>
#include <catch2/catch.hpp>
#include <tuple>

#include "provkit/hub/fetch.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;

namespace {

const std::string kCommit = "5d0c7d5a1f0e4c3b9a8d7e6f5a4b3c2d1e0f9a8b";

struct Recorder : hub::FetchObserver {
  std::vector<std::string> verified, in_place;
  void on_verified(const hub::FileCheck& c) override { verified.push_back(c.path); }
  void on_checked_in_place(const hub::FileCheck& c, const hub::hfcache::Layout&) override {
    in_place.push_back(c.path);
  }
  void on_plan(const hub::Manifest&, const hub::hfcache::Layout&, const hub::DownloadPlan&) override {
    FAIL("planned");
  }
};

hub::Manifest two_files() {
  hub::Manifest m;
  m.repo = {hub::RepoType::model, "org/name"};
  m.revision = kCommit;
  for (std::string content : {"{}", "weights"})
    m.files.push_back(
        {content == "{}" ? "config.json" : "w.bin", content.size(), util::sha256_hex(content), std::nullopt, 0});
  m.source = "test.yaml";
  return m;
}

}  // namespace

TEST_CASE("fetch_snapshot --verify-only and --offline: no network, the report and its JSON", "[snapshot][fetch]") {
  provkit::test::TempDir d("fetch");
  auto m = two_files();
  hub::hfcache::CacheLayout c(d.path, m.repo, kCommit);
  util::write_file_atomic(c.content_path("config.json", util::sha256_hex("{}")), "{}");
  c.publish("config.json", util::sha256_hex("{}"));
  // Nothing would answer: a run that tried the network would fail on this endpoint.
  hub::FetchOptions o;
  o.endpoint = "http://127.0.0.1:9";

  SECTION("verify-only") {
    o.mode = hub::FetchOptions::Mode::verify_only;
    Recorder rec;
    auto r = hub::fetch_snapshot(m, c, o, rec);
    CHECK(r.stage == hub::FetchReport::Stage::verified);
    CHECK(r.verified.files == 2);
    CHECK(r.verified.failed == 1);
    CHECK(r.exit_code() == 1);
    CHECK(rec.verified == std::vector<std::string>{"config.json", "w.bin"});
    auto j = hub::to_json(r);
    CHECK(j == nlohmann::json{{"mode", "verify-only"},
                              {"files", 2},
                              {"ok", 1},
                              {"failed", 1},
                              {"exit_code", 1},
                              {"location", c.describe()}});
  }
  SECTION("offline") {
    o.offline = true;
    util::write_file_atomic(c.content_path("w.bin", util::sha256_hex("weights")), "weights");
    Recorder rec;
    auto r = hub::fetch_snapshot(m, c, o, rec);
    CHECK(r.stage == hub::FetchReport::Stage::published);
    CHECK(r.published.present == 2);
    CHECK(r.exit_code() == 0);
    CHECK(rec.in_place.size() == 2);
    auto j = hub::to_json(r);
    CHECK(j["offline"] == true);
    CHECK(j["files"] == 2);
    CHECK(j["present"] == 2);
    CHECK(j["mode"] == "fetch");
    CHECK(util::read_file(c.file_path("w.bin")) == "weights");
  }
}

TEST_CASE("the summary of a run the pre-flight stopped", "[snapshot][fetch]") {
  hub::FetchReport r;
  r.stage = hub::FetchReport::Stage::upstream;
  r.upstream_files = 3;
  r.upstream_problems = 1;
  CHECK(r.exit_code() == 1);
  CHECK(r.upstream_refusal() == hub::UpstreamRefusal::changed);
  CHECK(hub::to_json(r) == nlohmann::json{{"mode", "fetch"},
                                          {"files", 3},
                                          {"upstream_problems", 1},
                                          {"bytes_transferred", 0},
                                          {"exit_code", 1},
                                          {"local_copy_verifies", false}});
  // Upstream moved on while every file here verifies: its own reason and exit status, not "the bytes are wrong".
  r.local_copy_verifies = true;
  CHECK(r.upstream_refusal() == hub::UpstreamRefusal::moved);
  CHECK(r.exit_code() == 5);
  CHECK(hub::reason_name(hub::UpstreamRefusal::moved) == "upstream_moved");
  CHECK(hub::reason_name(hub::UpstreamRefusal::changed) == "upstream_changed");
  CHECK(hub::to_json(r)["local_copy_verifies"] == true);
  CHECK(hub::to_json(r)["exit_code"] == 5);
  r.mode = hub::FetchOptions::Mode::check_upstream;
  r.local_copy_verifies = false;
  r.upstream_problems = 0;
  CHECK(r.exit_code() == 0);
  CHECK_FALSE(r.upstream_refusal());
  CHECK(hub::to_json(r)["mode"] == "check-upstream");
  CHECK_FALSE(hub::to_json(r).contains("local_copy_verifies"));  // the tree alone was compared
}

TEST_CASE("a rerun that needs nothing serves the copy here when no source answers; one that needs a file fails",
          "[snapshot][fetch]") {
  provkit::test::TempDir d("fetch-unreachable");
  auto m = two_files();
  hub::hfcache::CacheLayout c(d.path, m.repo, kCommit);
  util::write_file_atomic(c.content_path("config.json", util::sha256_hex("{}")), "{}");
  hub::FetchOptions o;
  {
    provkit::test::LoopbackServer gone("127.0.0.1", [](const std::string&, const std::string&) { return ""; });
    o.endpoint = gone.base;  // closed with the server: nothing answers there
  }
  o.http.retry.tries = 3;
  o.http.retry.backoff_base_s = 0.01;
  struct Unreachable : Recorder {
    std::vector<hub::SourceFailure> failed;
    void on_sources_unreachable(const std::vector<hub::SourceFailure>& f) override { failed = f; }
  };

  SECTION("a file missing: the network failure it is, after every retry") {
    Unreachable rec;
    try {
      hub::fetch_snapshot(m, c, o, rec);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.is(http::TransportFailure::no_answer));
      CHECK_THAT(e.what(), Catch::Contains("after 3 attempts"));
    }
    CHECK(rec.failed.empty());
    CHECK(rec.in_place.empty());
  }
  SECTION("every file in place and verified: each source asked once, the copy here served as --offline would") {
    util::write_file_atomic(c.content_path("w.bin", util::sha256_hex("weights")), "weights");
    Unreachable rec;
    auto r = hub::fetch_snapshot(m, c, o, rec);
    CHECK(r.stage == hub::FetchReport::Stage::published);
    CHECK(r.exit_code() == 0);
    CHECK(r.offline);
    CHECK(r.published.present == 2);
    REQUIRE(rec.failed.size() == 1);
    CHECK(rec.failed[0].url == o.endpoint);
    CHECK_THAT(rec.failed[0].why, Catch::Contains("after 1 attempts"));
    CHECK(rec.in_place == std::vector<std::string>{"config.json", "w.bin"});
    auto j = hub::to_json(r);
    CHECK(j["offline"] == true);
    REQUIRE(j["sources_unreachable"].size() == 1);
    CHECK(j["sources_unreachable"][0]["source"] == o.endpoint);
    CHECK(util::read_file(c.file_path("w.bin")) == "weights");  // published: the snapshot link is there
  }
}

TEST_CASE("pin_from_tree: a written manifest pins every file by sha256, never by the tree's SHA-1 alone",
          "[snapshot][fetch]") {
  const std::string config = "{\"model_type\": \"llama\"}\n", weights_sha(64, 'e');
  const std::string tree = R"([{"type": "file", "path": "config.json", "size": )" + std::to_string(config.size()) +
                           R"(, "oid": ")" + util::git_blob_id(config) +
                           R"("}, {"type": "file", "path": "w.safetensors", "size": 134, "oid": ")" +
                           std::string(40, '1') + R"(", "lfs": {"oid": ")" + weights_sha +
                           R"(", "size": 1000, "pointerSize": 134}}])";
  test::LoopbackServer server("127.0.0.1", [&](const std::string& line, const std::string&) {
    std::string body = line.find("/revision/") != std::string::npos ? R"({"sha": ")" + kCommit + R"("})"
                       : line.find("/tree/") != std::string::npos   ? tree
                       : line.find("/resolve/") != std::string::npos && line.find("config.json") != std::string::npos
                           ? config
                           : std::string();
    return std::string(body.empty() ? "HTTP/1.1 404 Not Found" : "HTTP/1.1 200 OK") +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  });
  hub::HubClient client(server.base, hub::Token{});
  std::vector<hub::TreeEntry> listed;
  std::vector<std::string> added;
  auto m = hub::pin_from_tree(client, {hub::RepoType::model, "org/name"}, "main", {}, {}, listed, hub::Pin::content,
                              [&](const hub::ManifestFile& f, const hub::TreeEntry&) { added.push_back(f.path); });
  CHECK(m.revision == kCommit);
  CHECK(m.ref == "main");
  REQUIRE(m.files.size() == 2);
  CHECK(added == std::vector<std::string>{"config.json", "w.safetensors"});
  const auto* pinned = m.find("config.json");
  CHECK(pinned->sha256 == util::sha256_hex(config));  // the content's, read once
  CHECK(pinned->git_oid == util::git_blob_id(config));
  CHECK(m.find("w.safetensors")->sha256 == weights_sha);  // an LFS file: the tree's sha256, no byte read
  auto asked = server.seen();
  CHECK(std::count_if(asked.begin(), asked.end(), [](const test::SeenRequest& r) {
          return r.request_line.find("/resolve/") != std::string::npos;
        }) == 1);
  // What --save-manifest writes reads back with both pins.
  auto again = hub::Manifest::parse(m.to_yaml(), "saved.yaml");
  CHECK(again.find("config.json")->sha256 == util::sha256_hex(config));

  // A manifest kept in memory (no --save-manifest) asks for no byte: the fetch checks the tree's id.
  auto in_memory = hub::pin_from_tree(client, {hub::RepoType::model, "org/name"}, "main", {}, {}, listed,
                                      hub::Pin::tree);
  CHECK(!in_memory.find("config.json")->sha256);
  CHECK(in_memory.find("config.json")->git_oid == util::git_blob_id(config));
}

TEST_CASE(
    "each downloaded file's result names the source that served it: a mirror, or the Hub after the mirror "
    "failed it",
    "[snapshot][fetch][mirror]") {
  provkit::test::TempDir d("fetch-provenance");
  auto m = two_files();
  hub::hfcache::CacheLayout c(d.path, m.repo, kCommit);
  std::string tree = "[";
  for (const auto& f : m.files)
    tree += std::string(tree.size() > 1 ? ", " : "") + R"({"type": "file", "path": ")" + f.path +
            R"(", "size": 134, "oid": ")" + std::string(40, '1') + R"(", "lfs": {"oid": ")" + *f.sha256 +
            R"(", "size": )" + std::to_string(f.size) + R"(, "pointerSize": 134}})";
  tree += "]";
  // Both list the tree and serve config.json; the mirror answers 404 for w.bin, the Hub serves it.
  auto serve = [&](bool mirror) {
    return [&tree, mirror](const std::string& line, const std::string& headers) {
      std::string body = line.find("/revision/") != std::string::npos    ? R"({"sha": ")" + kCommit + R"("})"
                         : line.find("/tree/") != std::string::npos      ? tree
                         : line.find("/resolve/") == std::string::npos   ? std::string()
                         : line.find("config.json") != std::string::npos ? "{}"
                         : mirror                                        ? std::string()
                                                                         : "weights";
      if (line.find("/resolve/") != std::string::npos && !body.empty()) return test::ranged_answer(body, headers);
      return std::string(body.empty() ? "HTTP/1.1 404 Not Found" : "HTTP/1.1 200 OK") +
             "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    };
  };
  test::LoopbackServer mirror("127.0.0.1", serve(true)), hub_server("127.0.0.2", serve(false));
  hub::FetchOptions o;
  o.endpoint = hub_server.base;
  o.mirrors = {mirror.base};
  o.http.retry.backoff_base_s = 0.01;
  struct Finished : hub::FetchObserver {
    std::vector<download::JobResult> results;
    void on_finish(const download::Job&, const download::JobResult& r) override { results.push_back(r); }
  } rec;
  auto r = hub::fetch_snapshot(m, c, o, rec);
  CHECK(r.stage == hub::FetchReport::Stage::published);
  CHECK(r.exit_code() == 0);
  CHECK(r.published.downloaded == 2);
  std::vector<std::tuple<std::string, download::Outcome, std::string>> got;
  for (const auto& j : rec.results) got.emplace_back(j.path, j.outcome, j.source);
  std::sort(got.begin(), got.end());  // the mirror's two files finish in either order
  CHECK(got == std::vector<std::tuple<std::string, download::Outcome, std::string>>{
                   {"config.json", download::Outcome::downloaded, mirror.base},
                   {"w.bin", download::Outcome::downloaded, hub_server.base},
                   {"w.bin", download::Outcome::failed, mirror.base}});  // asked of the mirror, which refused it
  CHECK(util::read_file(c.file_path("w.bin")) == "weights");
}
