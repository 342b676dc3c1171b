// Cutting a file into ranges and the sidecar that keeps their progress.
#include <catch2/catch.hpp>

#include "provkit/download/ranges.hpp"

using namespace provkit::download::ranges;

namespace {
constexpr std::uint64_t MiB = 1ull << 20;

// Ranges in order, without gap or overlap, covering [0, size).
void check_cover(const std::vector<Range>& rs, std::uint64_t size) {
  REQUIRE(!rs.empty());
  CHECK(rs.front().start == 0);
  CHECK(rs.back().end == size);
  for (std::size_t i = 1; i < rs.size(); ++i) CHECK(rs[i].start == rs[i - 1].end);
}
}  // namespace

TEST_CASE("plan: one range for small files and for one connection", "[ranges]") {
  auto small = plan(31 * MiB, 8, 16 * MiB);
  REQUIRE(small.size() == 1);
  CHECK(small[0].end == 31 * MiB);
  CHECK(plan(8ull << 30, 1, 16 * MiB).size() == 1);
  auto empty = plan(0, 8, 16 * MiB);
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].complete());
}

TEST_CASE("plan: about four ranges per connection, at most 128 MiB, none shorter than the minimum", "[ranges]") {
  auto big = plan(8ull << 30, 8, 16 * MiB);
  check_cover(big, 8ull << 30);
  // 56 of 128 MiB (the cap), then the last 8 x 128 MiB (one per connection) as 32 of 32 MiB.
  REQUIRE(big.size() == 88);
  CHECK(big[0].end == 128 * MiB);
  CHECK(big[55].end - big[55].start == 128 * MiB);
  CHECK(big[56].start == 7 * 1024 * MiB);
  CHECK(big.back().end - big.back().start == 32 * MiB);
  CHECK(plan(8ull << 30, 8, 256 * MiB).front().end == 256 * MiB);  // the minimum beats the cap
  auto shard = plan(1ull << 30, 8, 16 * MiB);
  check_cover(shard, 1ull << 30);
  CHECK(shard.size() == 40);  // 24 of 32 MiB, then 16 of 16 MiB (quarter size, but not under the minimum)
  CHECK(shard.back().end - shard.back().start == 16 * MiB);
  // The minimum wins over the per-connection count.
  auto medium = plan(40 * MiB, 8, 16 * MiB);
  check_cover(medium, 40 * MiB);
  CHECK(medium.size() == 2);  // 16 + 24: the 8 MiB sliver joins the range before it
  for (const auto& r : medium) CHECK(r.end - r.start >= 16 * MiB);
  // Odd sizes still cover every byte.
  auto odd = plan(100 * MiB + 12345, 3, 1 * MiB);
  check_cover(odd, 100 * MiB + 12345);
}

TEST_CASE("plan: counted before it is made; a claimed 2^62 bytes is at most 65536 ranges, not 2^35",
          "[ranges][checked]") {
  // Before: 2^35 ranges of 128 MiB (800 GB of plan, allocated before the first request; bad_alloc).
  auto huge = plan(1ull << 62, 8, 16 * MiB);
  check_cover(huge, 1ull << 62);
  CHECK(huge.size() <= max_planned_ranges() + 4 * 8 + 1);
  CHECK(huge.front().end == (1ull << 62) / max_planned_ranges());
  // Up to 8 TiB the ranges stay at most 128 MiB (the cap counts only past it).
  CHECK(plan(8ull << 40, 8, 16 * MiB).front().end == 128 * MiB);
  // Sizes and minimums near 2^64 neither wrap the rounding nor the range ends.
  const std::uint64_t max = ~0ull;
  auto top = plan(max, 16, 16 * MiB);
  check_cover(top, max);
  CHECK(top.size() <= max_planned_ranges() + 4 * 16 + 1);
  CHECK(plan(max, 16, max / 2 + 1).size() == 1);  // under twice the minimum (which 2 * min_split wrapped to 0)
  auto halves = plan(max, 16, max / 4);
  check_cover(halves, max);
  CHECK(halves.size() <= 4);
}

TEST_CASE("contiguous prefix and done bytes", "[ranges]") {
  std::vector<Range> rs = {{0, 10, 10}, {10, 20, 4}, {20, 30, 10}};
  CHECK(contiguous(rs) == 14);
  CHECK(done_bytes(rs) == 24);
  rs[1].done = 10;
  CHECK(contiguous(rs) == 30);
  mark_prefix_done(rs, 15);
  CHECK(rs[0].done == 10);
  CHECK(rs[1].done == 5);
  CHECK(rs[2].done == 0);
}

TEST_CASE("sidecar: round trip, and anything that does not describe the file is refused", "[ranges]") {
  std::vector<Range> rs = {{0, 100, 40}, {100, 250, 150}, {250, 300, 0}};
  auto text = format_sidecar(300, rs);
  CHECK(text == "provkit-ranges 1\nsize 300\nrange 0 100 40\nrange 100 250 150\nrange 250 300 0\n");
  auto back = parse_sidecar(text, 300);
  REQUIRE(back);
  REQUIRE(back->size() == 3);
  CHECK((*back)[0].done == 40);
  CHECK((*back)[1].complete());

  CHECK_FALSE(parse_sidecar(text, 301));                                           // another file's size
  CHECK_FALSE(parse_sidecar("provkit-ranges 2\nsize 300\nrange 0 300 0\n", 300));  // unknown version
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\nrange 0 100 0\nrange 150 300 0\n", 300));  // gap
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\nrange 0 200 0\nrange 100 300 0\n", 300));  // overlap
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\nrange 0 200 0\n", 300));                   // short of the end
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\nrange 0 300 301\n", 300));                 // done past the end
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\nrange 0 300 -1\n", 300));                  // not a number
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\nrange 0 300 0 9\n", 300));                 // extra field
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\n", 300));                                  // no range
  CHECK_FALSE(parse_sidecar("provkit-ranges 1\nsize 300\nrange 0 300", 300));                       // torn line
}
