#include "provkit/download/resume.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::download {

namespace {
// A sidecar is a few lines per range; a link, FIFO or huge file there is unreadable, never read.
constexpr std::size_t kSidecarMax = 1u << 20;
}  // namespace

std::string ResumePlan::describe() const {
  std::size_t complete = static_cast<std::size_t>(
      std::count_if(ranges.begin(), ranges.end(), [](const ranges::Range& r) { return r.complete(); }));
  std::string cut = ranges.size() > 1 ? " in " + std::to_string(ranges.size()) + " ranges" : " as one stream";
  switch (from) {
    case From::nothing: return "no bytes yet: a fresh start" + cut;
    case From::sidecar:
      return "resume from " + std::to_string(have) + " bytes (the sidecar: " + std::to_string(complete) + " of " +
             std::to_string(ranges.size()) + " ranges complete" +
             (truncate_to ? ", the partial file cut back to " + std::to_string(*truncate_to) + " bytes" : "") + ")";
    case From::prefix:
      return "resume from " + std::to_string(have) + " bytes (the partial file's length, no sidecar)" + cut;
    case From::unreadable: return "start over: the partial file's range record is unreadable" + cut;
    case From::longer: return "start over: the partial file is longer than the file" + cut;
  }
  return "?";
}

std::string ResumePlan::restart_note() const {
  if (from == From::longer) return "the partial file is longer than the file; starting over";
  if (from == From::unreadable) return "the partial file's range record is unreadable; starting over";
  return {};
}

ResumePlan plan_resume(const std::optional<std::string>& sidecar, bool had_sidecar, std::uint64_t length,
                       std::uint64_t size, int connections, std::uint64_t min_split) {
  ResumePlan p;
  std::optional<std::vector<ranges::Range>> kept;
  if (sidecar) kept = ranges::parse_sidecar(*sidecar, size);
  if (kept) {
    p.from = ResumePlan::From::sidecar;
    if (length < size) {
      // Shorter than the sidecar's file (cut by someone): trust only what is there.
      for (auto& r : *kept) r.done = std::min(r.done, length > r.start ? length - r.start : 0);
    } else if (length > size) {
      // Longer (grown by someone): the sidecar's ranges cover [0, size), the rest is nobody's.
      p.truncate_to = size;
    }
    p.ranges = std::move(*kept);
  } else {
    if (length > size || had_sidecar) {
      p.from = length > size ? ResumePlan::From::longer : ResumePlan::From::unreadable;
      p.truncate_to = 0;
      p.remove_sidecar = true;
      length = 0;
    } else {
      p.from = length > 0 ? ResumePlan::From::prefix : ResumePlan::From::nothing;
    }
    p.ranges = ranges::plan(size, connections, min_split);
    ranges::mark_prefix_done(p.ranges, length);
  }
  p.have = ranges::done_bytes(p.ranges);
  return p;
}

SidecarOnDisk read_sidecar(const util::Root& root, const std::filesystem::path& sidecar) {
  SidecarOnDisk d;
  struct stat st {};
  d.there = root.stat(sidecar, st);
  if (d.there) {
    try {
      d.text = root.read(sidecar, kSidecarMax);
    } catch (const Error&) {}
  }
  return d;
}

ResumePlan resume_on_disk(const util::Root& root, const std::filesystem::path& partial, std::uint64_t size,
                          int connections, std::uint64_t min_split) {
  struct stat st {};
  std::uint64_t length = 0;
  try {
    if (root.stat(partial, st) && S_ISREG(st.st_mode)) length = static_cast<std::uint64_t>(st.st_size);
  } catch (const Error&) {  // below a link or out of reach: nothing the fetch could open either
  }
  SidecarOnDisk sidecar = read_sidecar(root, util::path_with_suffix(partial, ".ranges"));
  return plan_resume(sidecar.text, sidecar.there, length, size, connections, min_split);
}

}  // namespace provkit::download
