// The snapshot steps (provkit/snapshot.hpp) on a real cache in a temp directory.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <utility>

#include "provkit/hub/client.hpp"
#include "provkit/hub/snapshot.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;
using download::FileState;

namespace {

using provkit::test::TempDir;

const std::string kCommit = "5d0c7d5a1f0e4c3b9a8d7e6f5a4b3c2d1e0f9a8b";

// What the observer was told, in order.
struct Recorder : hub::SnapshotObserver {
  std::vector<std::pair<std::string, FileState>> verified, in_place;
  std::vector<std::pair<std::string, download::AssembleOutcome>> assembled;
  void on_verified(const hub::FileCheck& c) override { verified.emplace_back(c.path, c.verification.state); }
  void on_checked_in_place(const hub::FileCheck& c, const hub::hfcache::Layout&) override {
    in_place.emplace_back(c.path, c.verification.state);
  }
  void on_assembled(const hub::Assembly& a) override { assembled.emplace_back(a.entry->output, a.result.outcome); }
};

hub::Manifest manifest_of(std::vector<hub::ManifestFile> files) {
  hub::Manifest m;
  m.repo = {hub::RepoType::model, "org/name"};
  m.revision = kCommit;
  m.files = std::move(files);
  m.source = "test.yaml";
  return m;
}

hub::ManifestFile pinned(const std::string& path, const std::string& content, bool by_git_oid) {
  hub::ManifestFile f{path, content.size(), util::sha256_hex(content), std::nullopt, 0};
  if (by_git_oid) f.git_oid = util::git_blob_id(content);
  return f;
}

// Stores `content` as the blob `etag` and links it into the snapshot.
void put(hub::hfcache::CacheLayout& c, const std::string& path, const std::string& etag, const std::string& content) {
  util::write_file_atomic(c.content_path(path, etag), content);
  c.publish(path, etag);
}

}  // namespace

TEST_CASE("verify_snapshot: every file and pinned assembly output, in manifest order", "[snapshot]") {
  TempDir d("snapshot");
  auto m = manifest_of({pinned("config.json", "{}", true), pinned("a/weights.bin", "weights", false),
                        pinned("gone.txt", "x", true), pinned("short.bin", "12345", false)});
  m.assemble.push_back(
      {"whole.bin", {"a/weights.bin", "short.bin"}, util::sha256_hex("weights12345"), std::nullopt, 0});
  m.assemble.push_back({"unpinned.bin", {"a/weights.bin"}, std::nullopt, std::nullopt, 0});  // nothing to check
  hub::hfcache::CacheLayout c(d.path, m.repo, kCommit);
  put(c, "config.json", util::git_blob_id("{}"), "{}");
  put(c, "a/weights.bin", util::sha256_hex("weights"), "weigh7s");  // same size, other bytes
  put(c, "short.bin", util::sha256_hex("12345"), "1234");
  util::write_file_atomic(c.file_path("whole.bin"), "weights12345");

  Recorder rec;
  auto s = hub::verify_snapshot(m, c, rec);
  CHECK(s.files == 5);
  CHECK(s.failed == 3);
  using V = std::vector<std::pair<std::string, FileState>>;
  CHECK(rec.verified == V{{"config.json", FileState::ok},
                          {"a/weights.bin", FileState::sha256_mismatch},
                          {"gone.txt", FileState::missing},
                          {"short.bin", FileState::size_mismatch},
                          {"whole.bin", FileState::ok}});
}

TEST_CASE("check_in_place finds a blob by its git oid, its sha256 or the link's target, then publishes", "[snapshot]") {
  TempDir d("snapshot");
  std::string other_name(40, 'c');  // a blob name neither id gives: only the snapshot link knows it
  auto m = manifest_of({pinned("config.json", "{}", true), pinned("model.bin", "lfs bytes", false),
                        pinned("tok.json", "tok", false), pinned("missing.txt", "m", true)});
  hub::hfcache::CacheLayout c(d.path, m.repo, kCommit);
  put(c, "config.json", util::git_blob_id("{}"), "{}");
  put(c, "model.bin", util::sha256_hex("lfs bytes"), "lfs bytes");
  put(c, "tok.json", other_name, "tok");

  Recorder rec;
  auto files = hub::check_in_place(m, c, rec);
  REQUIRE(files.results.size() == 4);
  CHECK(files.etags ==
        std::vector<std::string>{util::git_blob_id("{}"), util::sha256_hex("lfs bytes"), other_name, ""});
  for (int i = 0; i < 3; ++i) CHECK(files.results[i].outcome == download::Outcome::present);
  CHECK(files.results[0].sha256 == util::sha256_hex("{}"));
  CHECK(files.results[3].outcome == download::Outcome::failed);
  CHECK(files.results[3].reason == ReasonId(download::FileFailure::not_verified));
  CHECK(rec.in_place.back() == std::pair<std::string, FileState>{"missing.txt", FileState::missing});

  // A second look trusts the verified stamps the first one wrote.
  Recorder again;
  auto second = hub::check_in_place(m, c, again);
  CHECK(second.results[1].from_stamp);

  // One file failed: the others are published, nothing is assembled, no ref is written.
  m.assemble.push_back({"both.bin", {"config.json", "model.bin"}, std::nullopt, std::nullopt, 0});
  fs::remove(c.file_path("model.bin"));
  auto s = hub::publish_snapshot(m, c, files, rec, {{"main"}, false});
  CHECK(s.present == 3);
  CHECK(s.failed == 1);
  CHECK(s.code() == ExitCode::check_failed);
  CHECK(util::read_file(c.file_path("model.bin")) == "lfs bytes");  // linked again
  CHECK(rec.assembled.empty());
  CHECK_FALSE(fs::exists(c.ref_path("main")));
}

TEST_CASE("publish_snapshot assembles and finishes the layout only when everything verified", "[snapshot]") {
  TempDir d("snapshot");
  auto m = manifest_of({pinned("p1", "ab", true), pinned("p2", "cd", true)});
  m.assemble.push_back({"whole", {"p1", "p2"}, util::sha256_hex("abcd"), 4, 0});
  hub::hfcache::CacheLayout c(d.path, m.repo, kCommit);
  put(c, "p1", util::git_blob_id("ab"), "ab");
  put(c, "p2", util::git_blob_id("cd"), "cd");
  Recorder rec;
  auto files = hub::check_in_place(m, c, rec);
  auto s = hub::publish_snapshot(m, c, files, rec, {{"main"}, false});
  CHECK(s.present == 2);
  CHECK(s.assembled == 1);
  CHECK(s.failed == 0);
  CHECK(s.code() == ExitCode::ok);
  CHECK_FALSE(s.reason);
  CHECK(util::read_file(c.file_path("whole")) == "abcd");
  CHECK(util::read_file(c.ref_path("main")) == kCommit);
  REQUIRE(rec.assembled.size() == 1);
  CHECK(rec.assembled[0].second == download::AssembleOutcome::assembled);
  auto again = hub::publish_snapshot(m, c, files, rec, {{"main"}, false});
  CHECK(again.assembled == 0);  // an output in place as the last run left it is unchanged, not assembled again
  CHECK(again.unchanged == 1);
  CHECK(rec.assembled[1].second == download::AssembleOutcome::unchanged);

  SECTION("a wrong assembly fails the run and writes no ref") {
    fs::remove(c.ref_path("main"));
    m.assemble[0].output = "other";
    m.assemble[0].sha256 = std::string(64, 'f');
    auto bad = hub::publish_snapshot(m, c, files, rec, {{"main"}, false});
    CHECK(bad.failed == 1);
    CHECK(bad.assembled == 0);
    CHECK(bad.reason == ReasonId(download::FileFailure::mismatch));
    CHECK(rec.assembled.back().second == download::AssembleOutcome::mismatch);
    CHECK_FALSE(fs::exists(c.file_path("other")));
    CHECK_FALSE(fs::exists(c.ref_path("main")));
  }
  SECTION("the worst failure decides the reason: auth over network over a failed check, the first of its kind") {
    hub::SnapshotFiles failing = files;
    for (ReasonId reason :
         {ReasonId(download::FileFailure::not_found), ReasonId(hub::HubRefusal::gated),
          ReasonId(download::FileFailure::access_refused), ReasonId(download::FileFailure::network)}) {
      download::JobResult r;
      r.path = "x";
      r.reason = reason;
      r.bytes_transferred = 10;
      failing.results.push_back(r);
      failing.etags.emplace_back();
    }
    auto bad = hub::publish_snapshot(m, c, failing, rec, {{"main"}, false});
    CHECK(bad.failed == 4);
    CHECK(bad.reason == ReasonId(hub::HubRefusal::gated));
    CHECK(bad.code() == ExitCode::auth);
    CHECK(bad.bytes_transferred == 40);
  }
}

TEST_CASE("check_upstream refutes a tree-given blob name held by other content with that id", "[snapshot]") {
  TempDir d("snapshot");
  // The manifest pins "hello" by sha256 alone; the tree names the blob by the git id of "world".
  auto m = manifest_of({pinned("config.json", "hello", false)});
  std::vector<hub::TreeEntry> tree{{"file", "config.json", 5, util::git_blob_id("world"), std::nullopt}};
  hub::hfcache::CacheLayout c(d.path, m.repo, kCommit);

  auto checks = hub::check_upstream(m, c, tree);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].state == hub::UpstreamState::ok);
  CHECK(checks[0].etag == util::git_blob_id("world"));
  auto plan = hub::plan_downloads(m, c, checks, "http://127.0.0.1:9");
  REQUIRE(plan.size() == 1);
  CHECK(plan.total_bytes == 5);
  CHECK(plan.etags == std::vector<std::string>{util::git_blob_id("world")});
  const download::Job job = plan.job(0);
  CHECK(job.spec.git_oid == util::git_blob_id("world"));  // the downloaded content must have the id it is stored under
  CHECK(job.final_path == c.blob_path(util::git_blob_id("world")));
  CHECK(job.url == hub::resolve_url("http://127.0.0.1:9", m.repo, kCommit, "config.json"));
  CHECK(job.verified_stamp == hub::stamp_path(c, "verified", "config.json"));

  util::write_file_atomic(c.blob_path(util::git_blob_id("world")), "world");  // truly that id, other content
  checks = hub::check_upstream(m, c, tree);
  CHECK(checks[0].state == hub::UpstreamState::changed);
  CHECK(checks[0].etag.empty());
  CHECK(util::read_file(c.blob_path(util::git_blob_id("world"))) == "world");  // left alone
}

TEST_CASE("open_layout and the paths a layout writes itself", "[snapshot]") {
  TempDir d("snapshot");
  auto m = manifest_of(
      {pinned("config.json", "{}", true), {".cache/huggingface/SHA256SUMS", 1, std::string(64, 'a'), std::nullopt, 7}});
  auto cache = hub::open_layout(m, d.path / "cache", {});
  CHECK(cache->root() == d.path / "cache" / "models--org--name" / "snapshots" / kCommit);
  CHECK_FALSE(hub::find_reserved_path(m, *cache));
  auto local = hub::open_layout(m, d.path / "cache", d.path / "local");
  CHECK(local->root() == d.path / "local");
  auto r = hub::find_reserved_path(m, *local);
  REQUIRE(r);
  CHECK(r->path == ".cache/huggingface/SHA256SUMS");
  CHECK(r->line == 7);
  CHECK_FALSE(r->reason.empty());
  m.files.pop_back();
  m.assemble.push_back({".cache/huggingface/x", {"config.json"}, std::nullopt, std::nullopt, 9});
  r = hub::find_reserved_path(m, *local);
  REQUIRE(r);
  CHECK(r->line == 9);
}

TEST_CASE("pin_tree_files: globs, LFS by the tree's sha256, other files hashed and checked", "[snapshot]") {
  std::string lfs_sha = util::sha256_hex("big");
  std::vector<hub::TreeEntry> tree{
      {"directory", "sub", 0, std::string(40, 'd'), std::nullopt},
      {"file", "config.json", 2, util::git_blob_id("{}"), std::nullopt},
      {"file", "sub/model.safetensors", 130, std::string(40, 'e'), hub::LfsInfo{lfs_sha, 3}},
      {"file", "README.md", 3, util::git_blob_id("hi!"), std::nullopt},
  };
  std::map<std::string, std::string> content{{"config.json", "{}"}, {"README.md", "hi!"}};
  std::vector<std::string> fetched, added;
  auto fetch_small = [&](const hub::TreeEntry& e) {
    fetched.push_back(e.path);
    return content.at(e.path);
  };
  auto on_added = [&](const hub::ManifestFile& f, const hub::TreeEntry&) { added.push_back(f.path); };

  auto files = hub::pin_tree_files(tree, {}, {"*.md"}, fetch_small, on_added);
  REQUIRE(files.size() == 2);
  CHECK(added == std::vector<std::string>{"config.json", "sub/model.safetensors"});
  CHECK(fetched == std::vector<std::string>{"config.json"});  // the LFS file is never downloaded
  CHECK(files[0].sha256 == util::sha256_hex("{}"));
  CHECK(files[0].git_oid == util::git_blob_id("{}"));
  CHECK(files[1].size == 3);  // the LFS object's, not the pointer's
  CHECK(files[1].sha256 == lfs_sha);
  CHECK_FALSE(files[1].git_oid);

  CHECK(hub::pin_tree_files(tree, {"sub/*"}, {}, fetch_small, on_added).size() == 1);
  CHECK(hub::pin_tree_files(tree, {"nothing*"}, {}, fetch_small, on_added).empty());

  content["README.md"] = "hi?";  // not what the tree says
  try {
    hub::pin_tree_files(tree, {"README.md"}, {}, fetch_small, on_added);
    FAIL("content the tree does not describe was pinned");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::network);
  }
  tree.push_back({"file", "../escape", 2, util::git_blob_id("{}"), std::nullopt});
  CHECK_THROWS_AS(hub::pin_tree_files(tree, {"../*"}, {}, fetch_small, on_added), Error);
}

TEST_CASE("refs as huggingface_hub writes them: the name resolved, main only when it is main's commit", "[snapshot]") {
  hub::Manifest m;
  m.revision = kCommit;
  const std::string other(40, 'e');
  auto names = [](const hub::hfcache::RefPlan& p) { return p.names; };
  using V = std::vector<std::string>;
  CHECK(names(hub::plan_refs(m, kCommit, true)) == V{"main"});
  CHECK(names(hub::plan_refs(m, other, true)).empty());          // main is another commit: refs/main stays
  CHECK(names(hub::plan_refs(m, std::nullopt, true)).empty());   // the Hub has no main
  CHECK(hub::plan_refs(m, std::nullopt, false).main_if_absent);  // offline
  m.ref = "v1";
  CHECK(names(hub::plan_refs(m, other, true)) == V{"v1"});
  CHECK(names(hub::plan_refs(m, kCommit, true)) == V{"v1", "main"});
  m.ref = "main";
  CHECK(names(hub::plan_refs(m, std::nullopt, false)) == V{"main"});
  CHECK_FALSE(hub::plan_refs(m, std::nullopt, false).main_if_absent);
  CHECK(hub::ref_for_revision("v1", kCommit) == "v1");
  CHECK_FALSE(hub::ref_for_revision(kCommit, kCommit));  // a commit is no name
  CHECK_FALSE(hub::ref_for_revision("../x", kCommit));
  CHECK(hub::ref_for_revision("refs/pr/1", kCommit) == "refs/pr/1");
}
