// The one resume rule (download/resume.hpp): what plan_resume decides a partial
// file of a given length is worth with or without its sidecar (no files), and
// resume_on_disk reading a partial file and its sidecar as they lie, for hub's
// plan, to the same decision the engine's open makes.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "download/range_record.hpp"
#include "provkit/download/resume.hpp"
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

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }
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

TEST_CASE("resume_on_disk: the partial file and its sidecar as they lie, decided as the engine's open decides",
          "[download][partial]") {
  test::TempDir dir("resume-on-disk");
  util::Root root(dir.path);
  fs::path partial = dir / "blob.partial";
  fs::path sidecar = dir / "blob.partial.ranges";
  // Nothing there.
  CHECK(download::resume_on_disk(root, partial, kSize).from == ResumePlan::From::nothing);
  // A single stream's prefix.
  write(partial, std::string(1000, 'x'));
  ResumePlan p = download::resume_on_disk(root, partial, kSize);
  CHECK(p.from == ResumePlan::From::prefix);
  CHECK(p.have == 1000);
  // Longer than the file with no sidecar: the engine starts over, so nothing is kept (a plan that read its
  // length said "RESUME, 0 to fetch" and the fetch then fetched it all).
  write(partial, std::string(kSize + 1, 'x'));
  p = download::resume_on_disk(root, partial, kSize);
  CHECK(p.from == ResumePlan::From::longer);
  CHECK(p.have == 0);
  // An empty file at the sidecar's name is a sidecar that does not describe the file: start over.
  write(partial, std::string(1000, 'x'));
  write(sidecar, "");
  CHECK(download::resume_on_disk(root, partial, kSize).have == 0);
  // A sidecar claiming more than the partial file holds: only what is there counts.
  std::vector<download::ranges::Range> r = {{0, 4 * kMiB, 4 * kMiB}, {4 * kMiB, kSize, 4 * kMiB}};
  write(sidecar, sidecar_of(r));
  write(partial, std::string(kMiB, 'x'));
  p = download::resume_on_disk(root, partial, kSize);
  CHECK(p.from == ResumePlan::From::sidecar);
  CHECK(p.have == kMiB);
  // The same decision as RangeRecord::load, which the engine opens the partial file with.
  download::RangeRecord rec(root, sidecar, kSize);
  CHECK(rec.load(kMiB, 1, 16 * kMiB).have == p.have);
  // A link at the partial file's name holds nothing (the engine's open refuses it).
  fs::remove(partial);
  fs::remove(sidecar);
  fs::create_symlink("/etc/passwd", partial);
  CHECK(download::resume_on_disk(root, partial, kSize).have == 0);
}
