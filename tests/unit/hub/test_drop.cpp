// Dropping the parts of a verified assembly (hub/drop.hpp): the record and its parsing, which parts may go
// while another assembly still needs them, the disk peak the gate counts, and a drop on a real cache in a
// temp directory (the link goes, the blob goes only when no other snapshot link names it).
#include <catch2/catch.hpp>
#include <filesystem>

#include "provkit/download/blob_lock.hpp"
#include "provkit/hub/drop.hpp"
#include "provkit/hub/plan.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

namespace {
const std::string kCommit = "5d0c7d5a1f0e4c3b9a8d7e6f5a4b3c2d1e0f9a8b";

hub::AssembleEntry assembly(const std::string& output, std::vector<std::string> parts) {
  hub::AssembleEntry e;
  e.output = output;
  e.parts = std::move(parts);
  e.sha256 = std::string(64, 'e');
  return e;
}
}  // namespace

TEST_CASE("drop record: written and read back; anything else is no record", "[drop]") {
  hub::DropRecord r{"model.gguf", std::string(64, 'a'), 12345};
  auto back = hub::parse_drop_record(hub::drop_record_text(r));
  REQUIRE(back);
  CHECK(back->output == "model.gguf");
  CHECK(back->sha256 == r.sha256);
  CHECK(back->size == 12345);
  CHECK_FALSE(hub::parse_drop_record(""));
  CHECK_FALSE(hub::parse_drop_record("provkit-dropped 1\noutput x\nsha256 nothex\nsize 1\n"));
  CHECK_FALSE(hub::parse_drop_record("provkit-dropped 1\noutput x\nsha256 " + std::string(64, 'a') + "\nsize -1\n"));
  CHECK_FALSE(hub::parse_drop_record("provkit-dropped 2\noutput x\nsha256 " + std::string(64, 'a') + "\nsize 1\n"));
  // A size past 2^64 is a damaged record, never an exception out of the library.
  std::optional<hub::DropRecord> huge;
  REQUIRE_NOTHROW(huge = hub::parse_drop_record("provkit-dropped 1\noutput x\nsha256 " + std::string(64, 'a') +
                                                "\nsize 99999999999999999999\n"));
  CHECK_FALSE(huge);
}

TEST_CASE("droppable parts: a part another assembly still needs stays", "[drop]") {
  hub::Manifest m;
  m.assemble = {assembly("a", {"p1", "shared"}), assembly("b", {"shared", "p2"})};
  // After a: `shared` is still needed by b (not assembled yet).
  CHECK(hub::droppable_parts(m, 0, {true}) == std::vector<std::string>{"p1"});
  // After b, with a verified: both of b's parts go.
  CHECK(hub::droppable_parts(m, 1, {true, true}) == std::vector<std::string>{"shared", "p2"});
  // After b, with a failed: a keeps its parts, so `shared` stays.
  CHECK(hub::droppable_parts(m, 1, {false, true}) == std::vector<std::string>{"p2"});
}

TEST_CASE("peak: each output is written while its parts are still there", "[drop]") {
  CHECK(hub::peak_assembly_bytes({}, {}) == 0);
  CHECK(hub::peak_assembly_bytes({4, 4}, {4, 4}) == 4);
  CHECK(hub::peak_assembly_bytes({4, 6}, {4, 6}) == 6);
  CHECK(hub::peak_assembly_bytes({4, 4}, {0, 0}) == 8);  // nothing dropped: every output adds up
  CHECK(hub::peak_assembly_bytes({0, 4}, {4, 4}) == 0);  // the first output already there gives back room
  // Sizes past 2^63 are neither negative nor wrapped (a signed 64-bit sum made 2^63 + 1 a peak of 0).
  CHECK(hub::peak_assembly_bytes({(1ull << 63) + 1}, {0}) == (1ull << 63) + 1);
  CHECK(hub::peak_assembly_bytes({1ull << 63, 1ull << 63}, {0, 0}) == ~0ull);  // 2^64: held at the top
  CHECK(hub::peak_assembly_bytes({1ull << 63, 1ull << 62}, {1ull << 63, 0}) == 1ull << 63);
}

TEST_CASE("drop_parts on a cache: link and blob go, a blob another link names stays", "[drop]") {
  provkit::test::TempDir tmp("drop");
  hub::Repo repo{hub::RepoType::model, "org/name"};
  hub::hfcache::CacheLayout layout(tmp.path, repo, kCommit);
  const std::string one = std::string(64, '1'), two = std::string(64, '2');
  util::write_file_atomic(layout.blob_path(one), std::string(4096, 'x'));
  util::write_file_atomic(layout.blob_path(two), std::string(4096, 'y'));
  layout.begin();
  layout.publish("p/part-1", one);
  layout.publish("p/part-2", two);
  layout.publish("copy-of-1", one);  // the same content under another path
  std::string whole = std::string(4096, 'x') + std::string(4096, 'y');
  util::write_file_atomic(layout.file_path("whole.bin"), whole);
  hub::AssembleEntry e = assembly("whole.bin", {"p/part-1", "p/part-2"});
  e.sha256 = util::sha256_hex(whole);
  hub::Manifest m;
  m.repo = repo;
  m.revision = kCommit;
  m.assemble = {e};

  std::string warning;
  auto dropped = hub::drop_parts(layout, e, *e.sha256, whole.size(), e.parts, {{"p/part-1", one}, {"p/part-2", two}},
                                 warning);
  REQUIRE(dropped.size() == 2);
  CHECK(dropped[0].freed_bytes == 0);  // copy-of-1 still names it
  CHECK(dropped[1].freed_bytes >= 4096);
  CHECK_FALSE(fs::exists(fs::symlink_status(layout.file_path("p/part-1"))));
  CHECK(fs::exists(layout.blob_path(one)));
  CHECK_FALSE(fs::exists(layout.blob_path(two)));
  CHECK(fs::exists(hub::drop_record_path(layout, "p/part-2")));

  // Found dropped while the output verifies; not once it is spoilt.
  auto found = hub::find_dropped_parts(m, layout, true);
  CHECK(found.parts.size() == 2);
  CHECK(*found.output_of("p/part-1") == "whole.bin");
  util::write_file_atomic(layout.file_path("whole.bin"), std::string(whole.size(), 'z'));
  CHECK(hub::find_dropped_parts(m, layout, true).parts.empty());
  CHECK(hub::find_dropped_parts(m, layout, false).parts.size() == 2);  // the record alone (--verify-only)
  // A record for another output's sha256 is no record.
  m.assemble[0].sha256 = std::string(64, 'f');
  CHECK(hub::find_dropped_parts(m, layout, false).parts.empty());
}

TEST_CASE("two runs on one cache: a blob is dropped only under its lock, never linked once gone", "[drop]") {
  // Run A (commit kCommit) drops its part; run B (another commit with the same part) links the same blob.
  // Both take the blob's lock, so the interleavings that remain are the two below, each correct.
  provkit::test::TempDir tmp("drop-race");
  hub::Repo repo{hub::RepoType::model, "org/name"};
  hub::hfcache::CacheLayout a(tmp.path, repo, kCommit);
  hub::hfcache::CacheLayout b(tmp.path, repo, std::string(40, 'b'));
  const std::string blob = std::string(64, '1');
  util::write_file_atomic(a.blob_path(blob), std::string(4096, 'x'));
  a.begin();
  b.begin();
  a.publish("part-1", blob);

  // 1. B holds the lock (it is checking or linking the blob) while A drops: the blob stays for B.
  {
    download::BlobLock b_linking;
    REQUIRE(b_linking.acquire(b.guard(), b.stored_paths("part-1", blob).lock, false));
    CHECK(a.remove_file("part-1", blob) == 0);
    CHECK_FALSE(fs::exists(fs::symlink_status(a.file_path("part-1"))));
    CHECK(fs::exists(a.blob_path(blob)));
  }
  b.publish("part-1", blob);
  CHECK(util::read_file(b.file_path("part-1")) == std::string(4096, 'x'));
  // ... and a later drop by A sees B's link and keeps the blob.
  a.publish("part-1", blob);
  CHECK(a.remove_file("part-1", blob) == 0);
  CHECK(fs::exists(a.blob_path(blob)));

  // 2. A dropped the blob first (no link named it): B, which verified it before, refuses to link a name to
  // nothing instead of publishing a dangling link and calling the snapshot verified.
  b.remove_file("part-1", blob);
  CHECK_FALSE(fs::exists(a.blob_path(blob)));
  CHECK_THROWS_WITH(b.publish("part-1", blob), Catch::Contains("was removed after it was verified"));
  CHECK_FALSE(fs::exists(fs::symlink_status(b.file_path("part-1"))));
}

TEST_CASE("plan: with parts dropped the gate counts the peak of one assembly", "[drop][plan]") {
  provkit::test::TempDir tmp("drop-plan");
  hub::Manifest m;
  m.repo = {hub::RepoType::model, "org/name"};
  m.revision = kCommit;
  for (const char* p : {"a1", "a2", "b1", "b2"}) {
    hub::ManifestFile f;
    f.path = p;
    f.size = 1 << 20;
    f.sha256 = std::string(64, p[0]).substr(0, 63) + p[1];
    m.files.push_back(f);
  }
  m.assemble = {assembly("a.bin", {"a1", "a2"}), assembly("b.bin", {"b1", "b2"})};
  hub::hfcache::CacheLayout layout(tmp.path, m.repo, kCommit);
  std::vector<hub::UpstreamCheck> checks;
  for (const auto& f : m.files) checks.push_back({f.path, hub::UpstreamState::ok, "", nullptr, *f.sha256, {}});
  auto plan = hub::plan_downloads(m, layout, checks, "http://127.0.0.1:1");
  auto keep = hub::plan_space(m, layout, plan);
  CHECK(keep.needed == (4u << 20) + (4u << 20));
  auto drop = hub::plan_space(m, layout, plan, true);
  CHECK(drop.needed == (4u << 20) + (2u << 20));
  CHECK(drop.drop_bytes == 4u << 20);
  CHECK(hub::to_json(drop)["drop_parts"] == true);
  // Parts dropped earlier: in place, no bytes to fetch.
  hub::DroppedParts gone;
  gone.parts = {{"a1", "a.bin"}, {"a2", "a.bin"}};
  auto rerun = hub::plan_space(m, layout, plan, true, &gone);
  CHECK(rerun.files[0].action == hub::FilePlan::Action::in_place);
  CHECK(rerun.files[0].dropped_into == "a.bin");
  CHECK(rerun.to_fetch == 2u << 20);
}
