// The writer of a partial file's ranges: small deliveries gathered and
// written in chunks, large ones written as they come, each at its range's
// position, progress counted only once written.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "download/range_writer.hpp"
#include "provkit/util/fd.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

namespace {
constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kSize = 32 * kMiB;  // ranges of several MiB with two connections

std::string read_at(int fd, std::uint64_t at, std::size_t n) {
  std::string s(n, '\0');
  REQUIRE(::pread(fd, s.data(), n, static_cast<off_t>(at)) == static_cast<ssize_t>(n));
  return s;
}
}  // namespace

TEST_CASE("RangeWriter: gathers small deliveries, writes them at the range's position once flushed",
          "[download][partial]") {
  test::TempDir dir("range-writer");
  util::Root root(dir.path);
  util::Fd fd(::open((dir / "blob.partial").c_str(), O_RDWR | O_CREAT, 0644));
  REQUIRE(fd);
  REQUIRE(::ftruncate(fd.get(), kSize) == 0);
  download::RangeRecord rec(root, dir / "blob.partial.ranges", kSize);
  rec.load(0, 2, kMiB);
  REQUIRE(rec.ranges().size() > 2);
  REQUIRE(rec.ranges()[0].end > download::RangeWriter::kWriteChunk + 10);
  download::RangeWriter w(dir / "blob.partial", kSize);
  std::vector<std::pair<std::size_t, bool>> commits;
  w.start(fd.get(), rec, [&](std::size_t i, bool moved) { commits.emplace_back(i, moved); });

  std::uint64_t second = rec.ranges()[1].start;
  w.write(1, "abcd", 4);
  w.write(1, "efgh", 4);
  // Gathered, not written: the range has not moved on, nothing committed.
  CHECK(w.gathering(1));
  CHECK(w.pending(1) == 8);
  CHECK(rec.ranges()[1].done == 0);
  CHECK(commits.empty());
  CHECK(w.flush_all());
  CHECK_FALSE(w.flush_all());  // nothing left
  CHECK(rec.ranges()[1].done == 8);
  CHECK(read_at(fd.get(), second, 8) == "abcdefgh");
  REQUIRE(commits.size() == 1);
  CHECK(commits[0] == std::pair<std::size_t, bool>{1, false});  // not the frontier: the hash waits

  // A delivery of a whole chunk is written as it comes; the frontier range moves the hash on.
  std::string chunk(download::RangeWriter::kWriteChunk, 'x');
  w.write(0, chunk.data(), chunk.size());
  CHECK_FALSE(w.gathering(0));
  CHECK(rec.ranges()[0].done == chunk.size());
  CHECK(commits.back() == std::pair<std::size_t, bool>{0, true});
  CHECK(read_at(fd.get(), 0, 4) == "xxxx");

  // The last bytes of a range are written at once, without a flush.
  std::uint64_t left = rec.ranges()[0].missing();
  std::string rest(left, 'y');
  w.write(0, rest.data(), 10);
  CHECK(w.gathering(0));
  w.write(0, rest.data() + 10, left - 10);
  CHECK_FALSE(w.gathering(0));
  CHECK(rec.ranges()[0].complete());
  CHECK(rec.frontier() == 1);
  CHECK(read_at(fd.get(), rec.ranges()[0].end - 1, 1) == "y");
  CHECK(w.finish() == 0);
}

TEST_CASE("RangeWriter: as one stream, it writes from the kept prefix on", "[download][partial]") {
  test::TempDir dir("range-writer");
  util::Root root(dir.path);
  util::Fd fd(::open((dir / "blob.partial").c_str(), O_RDWR | O_CREAT, 0644));
  REQUIRE(fd);
  download::RangeRecord rec(root, dir / "blob.partial.ranges", kSize);
  rec.load(0, 1, kMiB);
  download::RangeWriter w(dir / "blob.partial", kSize);
  w.start(fd.get(), rec, {});
  w.write(0, "0123", 4);
  w.flush(0);
  rec.as_one_stream(2);
  w.as_one_stream(2);
  w.write(0, "ab", 2);
  w.flush(0);
  CHECK(rec.have() == 4);
  CHECK(read_at(fd.get(), 0, 4) == "01ab");
  CHECK(w.finish() == 0);
}
