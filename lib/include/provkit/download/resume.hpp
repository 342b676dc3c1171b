#pragma once
// The one resume rule: what a partial file on disk (its length and its
// "<partial>.ranges" sidecar) is worth to the next fetch. The engine opens a
// partial file with it (RangeRecord::load), and hub's plan asks it for the
// dry run and the disk gate (hub/plan.hpp), so that what a dry run says will
// be fetched is what the fetch then fetches.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "provkit/download/ranges.hpp"
#include "provkit/util/beneath.hpp"

namespace provkit::download {

// What a partial file of `length` bytes is worth, given its sidecar.
struct ResumePlan {
  enum class From {
    nothing,     // no bytes there: a fresh start
    sidecar,     // the sidecar's ranges (clipped to the length when the file was cut)
    prefix,      // a single stream's partial file: its length is its prefix
    unreadable,  // a sidecar that does not describe the file: start over
    longer,      // longer than the file, no sidecar: start over
  };
  From from = From::nothing;
  std::vector<ranges::Range> ranges;
  std::optional<std::uint64_t> truncate_to;  // cut the partial file to this many bytes first
  bool remove_sidecar = false;
  std::uint64_t have = 0;  // bytes kept
  // One line for the trace: what was decided and why.
  std::string describe() const;
  // For the observer: why the file starts over (From::unreadable and From::longer), else empty.
  std::string restart_note() const;
};
// `sidecar`: the sidecar's text when it exists and could be read; `had_sidecar`:
// there is something at its name (readable or not).
ResumePlan plan_resume(const std::optional<std::string>& sidecar, bool had_sidecar, std::uint64_t length,
                       std::uint64_t size, int connections, std::uint64_t min_split);

// What is at a sidecar's name below `root` (lstat, a bounded read, no link followed): whether something is
// there, and its text when it could be read as a regular file.
struct SidecarOnDisk {
  bool there = false;
  std::optional<std::string> text;
};
SidecarOnDisk read_sidecar(const util::Root& root, const std::filesystem::path& sidecar);

// plan_resume of the partial file `partial` of a file of `size` bytes as it lies below `root` now, read
// without changing anything: what opening it for a fetch would keep. A partial that is not a regular file
// (absent, a link, a directory) holds nothing. `connections` and `min_split` cut the rest into ranges; the
// bytes kept do not depend on them.
ResumePlan resume_on_disk(const util::Root& root, const std::filesystem::path& partial, std::uint64_t size,
                          int connections = 1, std::uint64_t min_split = 16ull << 20);

}  // namespace provkit::download
