#include "provkit/hub/plan.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <set>

#include "provkit/download/ranges.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/size.hpp"

namespace provkit::hub {

namespace {

struct OnDisk {
  bool exists = false;
  std::uint64_t size = 0, allocated = 0;
};

// lstat below the layout's root (util::Root): a link planted there counts as nothing there.
OnDisk look(const util::Root& guard, const fs::path& p) {
  struct stat st {};
  try {
    if (!guard.stat(p, st) || !S_ISREG(st.st_mode)) return {};
  } catch (const Error&) {
    return {};
  }
  return {true, static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_blocks) * 512};
}

// What a partial holds: its sidecar's done ranges, else its length (a single
// stream's partial is its prefix), as PartialFile::open reads it.
std::uint64_t partial_have(const util::Root& guard, const fs::path& partial, const OnDisk& d, std::uint64_t size) {
  fs::path sidecar = util::path_with_suffix(partial, ".ranges");
  try {
    std::string text = guard.read_if_present(sidecar, 1 << 20);
    if (text.empty()) return std::min(d.size, size);
    if (auto r = download::ranges::parse_sidecar(text, size)) return download::ranges::done_bytes(*r);
  } catch (const Error&) {}
  return 0;
}

// The nearest directory that exists at or above `p`: where new files will go.
fs::path existing_dir(fs::path p) {
  std::error_code ec;
  while (!p.empty() && !fs::is_directory(p, ec)) {
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return p.empty() ? fs::path(".") : p;
}

}  // namespace

SpacePlan plan_space(const Manifest& m, const hfcache::Layout& layout, const DownloadPlan& plan) {
  SpacePlan s;
  std::set<fs::path> seen;  // one blob can be two paths' content: its bytes count once
  for (const auto& job : plan.jobs) {
    FilePlan f;
    f.path = job.spec.path;
    f.size = job.spec.size;
    OnDisk content = look(layout.guard(), job.final_path);
    OnDisk partial = look(layout.guard(), job.partial_path);
    if (content.exists && content.size == f.size) {
      f.action = FilePlan::Action::in_place;
      f.have = f.size;
      f.allocated = f.size;
    } else if (partial.exists) {
      f.have = partial_have(layout.guard(), job.partial_path, partial, f.size);
      f.action = f.have > 0 ? FilePlan::Action::resume : FilePlan::Action::fetch;
      f.allocated = std::min(partial.allocated, f.size);
    }
    if (seen.insert(job.final_path).second) {
      s.to_fetch += f.size - f.have;
      s.held += f.allocated;
      s.needed += f.size - f.allocated;
    }
    s.files.push_back(std::move(f));
  }
  for (const auto& e : m.assemble) {
    AssemblyPlan a;
    a.output = e.output;
    if (e.size) {
      a.size = *e.size;
    } else {
      for (const auto& p : e.parts)
        if (const auto* f = m.find(p)) a.size += f->size;
    }
    OnDisk out = look(layout.guard(), layout.file_path(e.output));
    a.in_place = out.exists && out.size == a.size;
    if (!a.in_place) s.assembly_bytes += a.size - std::min(out.allocated, a.size);
    s.assemblies.push_back(std::move(a));
  }
  s.needed += s.assembly_bytes;
  s.target = existing_dir(plan.jobs.empty() ? layout.root() : plan.jobs.front().final_path.parent_path());
  struct statvfs v {};
  if (::statvfs(s.target.c_str(), &v) == 0) s.free = static_cast<std::uint64_t>(v.f_bavail) * v.f_frsize;
  else s.free = UINT64_MAX;  // unknown: the gate does not refuse on a guess
  return s;
}

std::string action_name(FilePlan::Action a) {
  switch (a) {
    case FilePlan::Action::fetch: return "FETCH";
    case FilePlan::Action::resume: return "RESUME";
    case FilePlan::Action::in_place: return "IN PLACE";
  }
  return "";
}

nlohmann::json to_json(const SpacePlan& p) {
  nlohmann::json j = {{"to_fetch_bytes", p.to_fetch},       {"held_bytes", p.held},
                      {"assembly_bytes", p.assembly_bytes}, {"needed_bytes", p.needed},
                      {"target", p.target.string()},        {"fits", p.fits()}};
  if (p.free != UINT64_MAX) j["free_bytes"] = p.free;
  return j;
}

std::string no_space_sentence(const SpacePlan& p) {
  auto h = [](std::uint64_t n) { return util::format_size(n); };
  return "not enough space on the file system of " + p.target.string() + ": this fetch needs " + h(p.needed) +
         " more (" + h(p.to_fetch) + " still to fetch, " + h(p.assembly_bytes) + " of assembly outputs; " + h(p.held) +
         " already held) but " + h(p.free) + " are free; nothing was downloaded (hf-fetch --dry-run shows the plan)";
}

}  // namespace provkit::hub
