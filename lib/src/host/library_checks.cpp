// envcheck's loader checks: would the dynamic loader find this library
// (--lib), and does every DT_NEEDED of this object resolve, recursively (--elf).
#include "detail.hpp"
#include "provkit/kernels/listing.hpp"

namespace provkit::host::detail {

namespace {

std::string skipped_text(const std::vector<elf::Skipped>& skipped) {
  std::string t;
  for (const auto& s : skipped) t += (t.empty() ? "" : "; ") + s.path.string() + " (" + s.why + ")";
  return t;
}

}  // namespace

Result lib_check(const std::string& name, Probes& probes) {
  const auto& ctx = probes.search_context();
  Result r{.name = "lib " + name, .status = Status::fail, .rule = Rule::library_search};
  auto found = elf::find_library(name, ctx);
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : found.skipped) skipped.push_back({{"path", s.path.string()}, {"why", s.why}});
  r.data["skipped"] = skipped;
  if (found.path) {
    auto id = elf::read_identity(*found.path);
    r.status = Status::pass;
    r.reason = name + " -> " + found.path->string() + " (" + found.via + ", " + elf::describe(*id) + ")";
    if (!found.skipped.empty()) r.reason += "; passed over " + skipped_text(found.skipped);
    r.data["path"] = found.path->string();
    r.data["via"] = found.via;
    r.data["class_machine"] = elf::describe(*id);
    return r;
  }
  r.reason = "the loader would not find " + name + " for " + elf::describe(ctx.want) +
             " programs (searched LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories)";
  if (found.stopped_at) {
    r.reason += ": it stops at " + found.stopped_at->path.string() + " (" + found.stopped_at->why + ")";
    r.data["stopped_at"] = {{"path", found.stopped_at->path.string()}, {"why", found.stopped_at->why}};
  }
  if (!found.skipped.empty()) r.reason += "; passed over " + skipped_text(found.skipped);
  r.fix = "install the package that ships " + name +
          ", or add its directory to LD_LIBRARY_PATH (or /etc/ld.so.conf.d/ and run ldconfig)";
  return r;
}

void elf_checks(const std::string& path, Probes& probes, std::vector<Result>& out) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    // A directory: every ELF shared object under it (*.so, *.so.N; a linker script named .so is not one).
    auto found = kernels::collect_objects({path}, probes.search_context(), false);
    std::size_t objects = 0;
    for (const auto& object : found.objects) {
      if (!elf::read_identity(object)) continue;
      ++objects;
      elf_checks(object.string(), probes, out);
    }
    if (objects == 0)
      out.push_back({.name = "elf " + path,
                     .status = Status::fail,
                     .rule = Rule::elf_readable,
                     .reason = "no ELF shared object (*.so, *.so.N) under " + path,
                     .fix = "name the library's directory (a site-packages, a lib/) or the library itself",
                     .data = {{"path", path}}});
    return;
  }
  const std::string name = "elf " + path;
  elf::Resolution res;
  try {
    res = elf::resolve_needed(path, probes.search_context());
  } catch (const Error& e) {
    out.push_back({.name = name,
                   .status = Status::fail,
                   .rule = Rule::elf_readable,
                   .reason = std::string("cannot read it: ") + e.what(),
                   .fix = "check that the file is a complete ELF executable or shared object",
                   .data = {{"path", path}}});
    return;
  }
  nlohmann::json resolved = nlohmann::json::array();
  for (const auto& e : res.resolved)
    resolved.push_back({{"name", e.name},
                        {"path", e.lookup.path->string()},
                        {"via", e.lookup.via},
                        {"needed_by", e.needed_by.string()}});
  for (const auto& m : res.missing) {
    std::string reason = m.name + ", needed by " + m.needed_by.string() + ", will not resolve";
    nlohmann::json data = {{"name", m.name}, {"needed_by", m.needed_by.string()}};
    std::string fix = "install " + m.name + ", or add its directory to the needing object's RUNPATH or LD_LIBRARY_PATH";
    if (const auto& stop = m.lookup.stopped_at) {
      // ld.so opens the first candidate it finds and gives up there: later copies never get a chance.
      reason += ": the loader stops at " + stop->path.string() + " (" + stop->why + ")";
      data["stopped_at"] = {{"path", stop->path.string()}, {"why", stop->why}};
      fix = "replace " + stop->path.string() +
            " with the real library (a git-lfs pointer or a truncated copy?), or remove it";
    }
    if (!m.lookup.skipped.empty()) reason += "; passed over " + skipped_text(m.lookup.skipped);
    out.push_back({.name = name + ": " + m.name,
                   .status = Status::fail,
                   .rule = Rule::needed_resolution,
                   .reason = reason,
                   .fix = fix,
                   .data = data});
  }
  for (const auto& u : res.unreadable)
    out.push_back({.name = name,
                   .status = Status::warn,
                   .rule = Rule::elf_readable,
                   .reason = "a dependency could not be read: " + u});
  if (res.missing.empty()) {
    out.push_back({.name = name,
                   .status = Status::pass,
                   .rule = Rule::needed_resolution,
                   .reason = "all " + std::to_string(res.resolved.size()) + " needed libraries resolve (recursively)",
                   .data = {{"resolved", resolved}}});
  }
}

}  // namespace provkit::host::detail
