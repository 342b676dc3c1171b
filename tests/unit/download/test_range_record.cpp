// A partial file's ranges and sidecar: what plan_resume decides a partial
// file of a given length is worth with or without its sidecar (no files),
// and RangeRecord keeping the sidecar on disk and reading it back.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "download/range_record.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using download::plan_resume;
using download::ResumePlan;
namespace fs = std::filesystem;

namespace {
constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kSize = 8 * kMiB;

std::string sidecar_of(const std::vector<download::ranges::Range>& r) {
  return download::ranges::format_sidecar(kSize, r);
}
}  // namespace

TEST_CASE("plan_resume: nothing there is a fresh start, cut for the connections", "[download][partial]") {
  ResumePlan p = plan_resume(std::nullopt, false, 0, kSize, 2, kMiB);
  CHECK(p.from == ResumePlan::From::nothing);
  CHECK(p.have == 0);
  CHECK(p.ranges.size() > 1);
  CHECK_FALSE(p.truncate_to);
  CHECK(p.restart_note().empty());
  CHECK(p.describe().find("fresh start in " + std::to_string(p.ranges.size()) + " ranges") != std::string::npos);
}

TEST_CASE("plan_resume: a single stream's partial file resumes from its length", "[download][partial]") {
  ResumePlan p = plan_resume(std::nullopt, false, 3 * kMiB + 5, kSize, 1, kMiB);
  CHECK(p.from == ResumePlan::From::prefix);
  CHECK(p.have == 3 * kMiB + 5);
  REQUIRE(p.ranges.size() == 1);
  CHECK(p.ranges[0].next() == 3 * kMiB + 5);
  CHECK(p.describe() == "resume from 3145733 bytes (the partial file's length, no sidecar) as one stream");
  // A split fetch takes a stream's prefix up too: the ranges below it are complete.
  p = plan_resume(std::nullopt, false, 3 * kMiB, kSize, 4, kMiB);
  CHECK(p.have == 3 * kMiB);
  CHECK(download::ranges::contiguous(p.ranges) == 3 * kMiB);
}

TEST_CASE("plan_resume: the sidecar's ranges, clipped to a file cut short, the rest of a grown file cut off",
          "[download][partial]") {
  std::vector<download::ranges::Range> r = {{0, 4 * kMiB, 4 * kMiB}, {4 * kMiB, kSize, kMiB}};
  ResumePlan p = plan_resume(sidecar_of(r), true, kSize, kSize, 2, kMiB);
  CHECK(p.from == ResumePlan::From::sidecar);
  CHECK(p.have == 5 * kMiB);
  CHECK_FALSE(p.truncate_to);
  CHECK(p.describe() == "resume from 5242880 bytes (the sidecar: 1 of 2 ranges complete)");
  // Cut to 2 MiB by someone: only what is there is trusted.
  p = plan_resume(sidecar_of(r), true, 2 * kMiB, kSize, 2, kMiB);
  CHECK(p.have == 2 * kMiB);
  CHECK(p.ranges[0].done == 2 * kMiB);
  CHECK(p.ranges[1].done == 0);
  // Grown past the file's size: cut back, the sidecar's ranges kept.
  p = plan_resume(sidecar_of(r), true, kSize + 100, kSize, 2, kMiB);
  REQUIRE(p.truncate_to);
  CHECK(*p.truncate_to == kSize);
  CHECK(p.have == 5 * kMiB);
  CHECK(p.restart_note().empty());
}

TEST_CASE("plan_resume: an unreadable sidecar or an over-long file without one starts over", "[download][partial]") {
  ResumePlan p = plan_resume(std::string("provkit-ranges 1\nsize 12\n"), true, 5 * kMiB, kSize, 2, kMiB);
  CHECK(p.from == ResumePlan::From::unreadable);
  CHECK(p.have == 0);
  REQUIRE(p.truncate_to);
  CHECK(*p.truncate_to == 0);
  CHECK(p.remove_sidecar);
  CHECK(p.restart_note() == "the partial file's range record is unreadable; starting over");
  CHECK(p.describe().starts_with("start over: the partial file's range record is unreadable"));
  // Something at the sidecar's name that could not be read at all (a FIFO, a link): the same.
  CHECK(plan_resume(std::nullopt, true, 5 * kMiB, kSize, 2, kMiB).from == ResumePlan::From::unreadable);
  p = plan_resume(std::nullopt, false, kSize + 1, kSize, 2, kMiB);
  CHECK(p.from == ResumePlan::From::longer);
  CHECK(p.restart_note() == "the partial file is longer than the file; starting over");
  CHECK(p.have == 0);
}

TEST_CASE("RangeRecord: the sidecar written, read back on the next load, removed as one stream",
          "[download][partial]") {
  test::TempDir dir("range-record");
  util::Root root(dir.path);
  fs::path sidecar = dir / "blob.partial.ranges";
  {
    download::RangeRecord rec(root, sidecar, kSize);
    ResumePlan p = rec.load(0, 2, kMiB);
    CHECK(p.from == ResumePlan::From::nothing);
    REQUIRE(rec.split());
    std::size_t n = rec.ranges().size();
    // Progress of the second range does not move the frontier; the first range's does.
    CHECK_FALSE(rec.advance(1, 1000));
    CHECK(rec.frontier() == 0);
    CHECK(rec.advance(0, rec.ranges()[0].end));
    CHECK(rec.frontier() == 1);
    CHECK(rec.have() == rec.ranges()[0].end + 1000);
    rec.save();
    CHECK(fs::is_regular_file(sidecar));
    download::RangeRecord again(root, sidecar, kSize);
    p = again.load(kSize, 2, kMiB);
    CHECK(p.from == ResumePlan::From::sidecar);
    CHECK(again.ranges().size() == n);
    CHECK(again.have() == rec.have());
    CHECK(again.frontier() == 1);
    again.as_one_stream(rec.ranges()[0].end);
    CHECK_FALSE(fs::exists(sidecar));
    CHECK_FALSE(again.split());
    CHECK(again.have() == rec.ranges()[0].end);
  }
  // A link planted at the sidecar's name is never read: the file starts over.
  fs::create_symlink("/etc/passwd", sidecar);
  download::RangeRecord rec(root, sidecar, kSize);
  CHECK(rec.load(kMiB, 2, kMiB).from == ResumePlan::From::unreadable);
}

TEST_CASE("SidecarWriter: the newest content wins, drained before removal, errors rethrown on the caller's thread",
          "[download][partial]") {
  test::TempDir dir("sidecar-writer");
  util::Root root(dir.path);
  fs::path sidecar = dir / "blob.partial.ranges";
  {
    download::SidecarWriter w(root, sidecar);
    for (int i = 0; i < 200; ++i) w.post("content " + std::to_string(i) + "\n");
    w.drain();
    CHECK(util::read_file(sidecar) == "content 199\n");  // whatever was skipped, the last one stands
  }
  // The periodic saves of a RangeRecord go through it; remove() waits for them, so no sidecar comes back.
  {
    download::RangeRecord rec(root, sidecar, kSize);
    rec.load(0, 2, kMiB);
    REQUIRE(rec.split());
    rec.advance(0, rec.ranges()[0].end);
    rec.save_now_and_then(0);  // the range is full: saved now, in the background
    rec.remove();
    CHECK_FALSE(fs::exists(sidecar));
    rec.save_now_and_then(0);
    rec.drain();
    CHECK(fs::is_regular_file(sidecar));
  }
  // A write that fails (the sidecar's directory is a file) is thrown on the caller's thread, at drain or post.
  std::ofstream(dir / "not-a-dir") << "x";
  download::SidecarWriter bad(root, dir / "not-a-dir" / "blob.ranges");
  bad.post("x\n");
  CHECK_THROWS_AS(bad.drain(), provkit::Error);
  bad.drain();  // told once
}
