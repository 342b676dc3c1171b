// A partial file's ranges and sidecar: RangeRecord keeping the sidecar on disk
// and reading it back (the resume rule itself: test_resume.cpp).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "download/range_record.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using download::ResumePlan;
namespace fs = std::filesystem;

namespace {
constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kSize = 8 * kMiB;
}  // namespace

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
