#include "provkit/hub/plan.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <set>

#include "provkit/download/resume.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/fs.hpp"

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

SpacePlan plan_space(const Manifest& m, const hfcache::Layout& layout, const DownloadPlan& plan, bool drop_parts,
                     const DroppedParts* dropped) {
  SpacePlan s;
  s.drop_parts = drop_parts;
  // Manifest::parse bounds the sizes' total; these sums are checked all the same, each naming the file
  // that would take it past 2^64 - 1, so that no caller's plan can wrap into one that "fits".
  util::CheckedSum to_fetch("the bytes still to fetch"), held("the bytes already held"),
      needed("the disk space the fetch needs"), assembly_bytes("the bytes of the assembly outputs"),
      drop_bytes("the bytes of the parts dropped");
  std::set<std::string> seen;  // one blob can be two paths' content: its bytes count once
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const download::Job job = plan.job(k);  // made for the look and dropped: no job is held for every file
    FilePlan f;
    f.path = job.spec.path;
    f.size = job.spec.size;
    if (const auto* into = dropped ? dropped->output_of(f.path) : nullptr) {  // gone, and not wanted back
      f.action = FilePlan::Action::in_place;
      f.have = f.size;
      f.dropped_into = *into;
      s.files.push_back(std::move(f));
      continue;
    }
    OnDisk content = look(layout.guard(), job.final_path);
    OnDisk partial = look(layout.guard(), job.partial_path);
    if (content.exists && content.size == f.size) {
      f.action = FilePlan::Action::in_place;
      f.have = f.size;
      f.allocated = f.size;
    } else if (partial.exists) {
      // The engine's own rule (download/resume.hpp): a partial it would start over holds nothing.
      f.have = download::resume_on_disk(layout.guard(), job.partial_path, f.size).have;
      f.action = f.have > 0 ? FilePlan::Action::resume : FilePlan::Action::fetch;
      f.allocated = std::min(partial.allocated, f.size);
    }
    if (seen.insert(job.final_path.native()).second) {
      to_fetch.add(f.size - f.have, f.path);
      held.add(f.allocated, f.path);
      needed.add(f.size - f.allocated, f.path);
    }
    s.files.push_back(std::move(f));
  }
  std::vector<std::uint64_t> writes, freed;  // per assembly, for the peak when parts are dropped
  std::vector<bool> verified(m.assemble.size(), true);
  for (std::size_t i = 0; i < m.assemble.size(); ++i) {
    const auto& e = m.assemble[i];
    AssemblyPlan a;
    a.output = e.output;
    if (e.size) {
      a.size = *e.size;
    } else {
      util::CheckedSum parts("the sizes of the parts of " + e.output);
      for (const auto& p : e.parts)
        if (const auto* f = m.find(p)) parts.add(f->size, p);
      a.size = parts.value();
    }
    OnDisk out = look(layout.guard(), layout.file_path(e.output));
    a.in_place = out.exists && out.size == a.size;
    std::uint64_t write = a.in_place ? 0 : a.size - std::min(out.allocated, a.size);
    assembly_bytes.add(write, e.output);
    writes.push_back(write);
    // What dropping gives back after this output verifies: its parts' bytes (those still there or to
    // come; a blob another snapshot also names stays, which this does not see).
    util::CheckedSum gives("the bytes of the parts of " + e.output);
    if (drop_parts && e.sha256)
      for (const auto& p : droppable_parts(m, i, verified))
        if (const auto* f = m.find(p); f && !(dropped && dropped->contains(p))) gives.add(f->size, p);
    freed.push_back(gives.value());
    drop_bytes.add(gives.value(), e.output);
    s.assemblies.push_back(std::move(a));
  }
  s.to_fetch = to_fetch.value();
  s.held = held.value();
  s.assembly_bytes = assembly_bytes.value();
  s.drop_bytes = drop_bytes.value();
  s.needed =
      needed.add(drop_parts ? peak_assembly_bytes(writes, freed) : s.assembly_bytes, "the assembly outputs").value();
  s.target = existing_dir(plan.size() == 0 ? layout.root() : plan.job(0).final_path.parent_path());
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
  if (p.drop_parts) {
    j["drop_parts"] = true;
    j["drop_bytes"] = p.drop_bytes;
  }
  return j;
}

nlohmann::json gate_detail(const SpacePlan& p) {
  nlohmann::json j = {{"needed_bytes", p.needed}, {"target", p.target.string()}};
  if (p.free != UINT64_MAX) j["free_bytes"] = p.free;
  return j;
}

std::string_view reason_name(PlanRefusal r) {
  switch (r) {
    case PlanRefusal::no_space: return "no_space";
  }
  return "no_space";
}

ExitCode exit_code(PlanRefusal) { return ExitCode::check_failed; }

}  // namespace provkit::hub
