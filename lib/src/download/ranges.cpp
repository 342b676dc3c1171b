#include "provkit/download/ranges.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "provkit/util/checked.hpp"

namespace provkit::download::ranges {

namespace {
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr int kRangesPerConnection = 4;
constexpr std::uint64_t kMaxRange = 128 * kMiB;
constexpr std::uint64_t kMaxRanges = 1u << 16;  // before the tail's; see plan()
}  // namespace

std::uint64_t max_planned_ranges() { return kMaxRanges; }

std::vector<Range> plan(std::uint64_t size, int connections, std::uint64_t min_split) {
  min_split = std::max<std::uint64_t>(min_split, 1);
  if (connections <= 1 || size / 2 < min_split) return {Range{0, size, 0}};  // size < 2 * min_split
  std::uint64_t wanted = static_cast<std::uint64_t>(connections) * kRangesPerConnection;
  // At most kMaxRange (unless min_split says more): ranges that finish together
  // leave the hash that much behind, to catch up at the end of the file.
  std::uint64_t length = std::max(min_split, std::min(kMaxRange, size / wanted + (size % wanted != 0)));
  // The plan is counted before it is made: past kMaxRanges ranges (a file of more than 8 TiB: a size no
  // Hub file has, but one a listing can claim) the ranges grow instead, so a claimed 2^62 bytes is 65536
  // ranges of 64 TiB, not 2^35 of 128 MiB (800 GB of plan, allocated before the first request).
  length = std::max(length, size / kMaxRanges + (size % kMaxRanges != 0));
  auto whole_mibs = [](std::uint64_t n) {  // tidy offsets, where rounding up cannot pass 2^64 - 1
    return n >= kMiB && n <= UINT64_MAX - kMiB ? (n + kMiB - 1) / kMiB * kMiB : n;
  };
  length = whole_mibs(length);
  // The last stretch (one range per connection) goes in quarter-size ranges:
  // the ranges that finish last, together, are what the hash still has to
  // read when the transfer ends, and what an idle connection waits for.
  std::uint64_t tail_length = whole_mibs(std::max(min_split, length / 4));
  std::uint64_t stretch = util::saturating_mul(static_cast<std::uint64_t>(connections), length);
  std::uint64_t tail_start = size > stretch ? (size - stretch) / length * length : 0;
  std::vector<Range> out;
  for (std::uint64_t start = 0; start < size;) {
    std::uint64_t end = start + std::min(size - start, start < tail_start ? length : tail_length);
    out.push_back({start, end, 0});
    start = end;
  }
  // A last sliver shorter than min_split joins the range before it.
  if (out.size() > 1 && out.back().end - out.back().start < min_split) {
    out[out.size() - 2].end = size;
    out.pop_back();
  }
  return out;
}

std::uint64_t contiguous(const std::vector<Range>& ranges) {
  for (const auto& r : ranges)
    if (!r.complete()) return r.next();
  return ranges.empty() ? 0 : ranges.back().end;
}

std::uint64_t done_bytes(const std::vector<Range>& ranges) {
  std::uint64_t n = 0;
  for (const auto& r : ranges) n += r.done;
  return n;
}

void mark_prefix_done(std::vector<Range>& ranges, std::uint64_t prefix) {
  for (auto& r : ranges) r.done = prefix <= r.start ? 0 : std::min(prefix, r.end) - r.start;
}

std::string format_sidecar(std::uint64_t size, const std::vector<Range>& ranges) {
  std::string s = "provkit-ranges 1\nsize " + std::to_string(size) + "\n";
  for (const auto& r : ranges)
    s += "range " + std::to_string(r.start) + " " + std::to_string(r.end) + " " + std::to_string(r.done) + "\n";
  return s;
}

std::optional<std::vector<Range>> parse_sidecar(std::string_view text, std::uint64_t size) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line != "provkit-ranges 1") return std::nullopt;
  if (!std::getline(in, line) || line != "size " + std::to_string(size)) return std::nullopt;
  std::vector<Range> out;
  std::uint64_t expect_start = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string word, a, b, c, extra;
    if (!(fields >> word >> a >> b >> c) || word != "range" || (fields >> extra)) return std::nullopt;
    Range r;
    for (auto [text_value, target] : {std::pair{&a, &r.start}, std::pair{&b, &r.end}, std::pair{&c, &r.done}}) {
      auto [p, ec] = std::from_chars(text_value->data(), text_value->data() + text_value->size(), *target);
      if (ec != std::errc() || p != text_value->data() + text_value->size()) return std::nullopt;
    }
    if (r.start != expect_start || r.end <= r.start || r.end > size || r.done > r.end - r.start) return std::nullopt;
    expect_start = r.end;
    out.push_back(r);
  }
  if (expect_start != size || out.empty()) return std::nullopt;
  return out;
}

}  // namespace provkit::download::ranges
