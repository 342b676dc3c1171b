#pragma once
// The byte ranges a large file is fetched in over several connections, and
// the sidecar that keeps their progress across runs.
//
// A split file is one preallocated partial file; each range fills its own
// part of it. The sidecar ("<partial>.ranges") says how far each range got,
// so that a killed run's successor fetches only what is missing:
//
//   provkit-ranges 1
//   size <total bytes>
//   range <start> <end> <done>      (end exclusive; done: bytes written from start)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::download::ranges {

struct Range {
  std::uint64_t start = 0;
  std::uint64_t end = 0;   // exclusive
  std::uint64_t done = 0;  // bytes [start, start + done) are written

  std::uint64_t next() const { return start + done; }  // the first byte still missing
  std::uint64_t missing() const { return end - next(); }
  bool complete() const { return next() >= end; }
};

// How a file of `size` bytes is cut: one range when it is smaller than twice
// `min_split` or when there is one connection; otherwise ranges of at least
// `min_split`, about four per connection and at most 128 MiB, so that the
// contiguous prefix (what can be hashed) grows steadily and no connection
// idles long at the end. Bounded before anything is allocated: at most
// max_planned_ranges() ranges before the last stretch (about four per
// connection), longer ranges for a file that would need more.
std::vector<Range> plan(std::uint64_t size, int connections, std::uint64_t min_split);
std::uint64_t max_planned_ranges();

// Bytes [0, n) are all written.
std::uint64_t contiguous(const std::vector<Range>& ranges);
std::uint64_t done_bytes(const std::vector<Range>& ranges);

// Ranges as they stand after a sequential prefix of `prefix` bytes (a partial
// file written by a single stream, resumed by a split fetch).
void mark_prefix_done(std::vector<Range>& ranges, std::uint64_t prefix);

std::string format_sidecar(std::uint64_t size, const std::vector<Range>& ranges);
// The ranges of a sidecar, if it describes a file of `size` bytes: ranges in
// order, covering [0, size) without gap or overlap, done within each range.
// nullopt otherwise (the sidecar is then ignored and the file starts over).
std::optional<std::vector<Range>> parse_sidecar(std::string_view text, std::uint64_t size);

}  // namespace provkit::download::ranges
