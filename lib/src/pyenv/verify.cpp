#include "provkit/pyenv/verify.hpp"

#include <map>

#include "provkit/pyenv/interpreter.hpp"
#include "provkit/pyenv/venv.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/util/parallel.hpp"

namespace provkit::pyenv {

using namespace pyspec;

bool VerifyReport::clean() const {
  for (auto& d : dists)
    if (!d.check.clean()) return false;
  return !lock || lock->clean();
}

VerifyReport verify_env(const fs::path& env_root, unsigned jobs) {
  VerifyReport report;
  report.site_packages = find_site_packages(env_root);
  auto dists = list_installed(report.site_packages);
  auto listed = all_recorded_paths(report.site_packages, dists);
  report.dists.resize(dists.size());
  util::parallel_for(dists.size(), jobs, [&](std::size_t i) {
    report.dists[i] = {dists[i].name, dists[i].version, check_dist(env_root, dists[i], &listed)};
  });
  return report;
}

VerifyReport verify_env(const fs::path& env_root, unsigned jobs, const fs::path& lock, const LockSelection& selection,
                        const fs::path& cache_dir) {
  VerifyReport report = verify_env(env_root, jobs);
  Lock locked = read_lock(lock);
  Interpreter base = query_interpreter(base_interpreter(env_root), cache_dir);
  report.lock = compare_with_lock(list_installed(report.site_packages),
                                  applicable_entries(locked, base.markers, selection));
  return report;
}

nlohmann::json to_json(const VerifyReport& report, const std::string& env, const std::string& lock_file) {
  nlohmann::json j;
  j["environment"] = env;
  j["clean"] = report.clean();
  j["distributions"] = nlohmann::json::array();
  for (auto& d : report.dists) {
    nlohmann::json unverifiable = nlohmann::json::array();
    for (auto& u : d.check.unverifiable)
      unverifiable.push_back({{"path", u.path}, {"algorithm", u.algorithm}, {"why", u.why}});
    j["distributions"].push_back({{"name", d.name},
                                  {"version", d.version},
                                  {"clean", d.check.clean()},
                                  {"modified", d.check.modified},
                                  {"missing", d.check.missing},
                                  {"unlisted", d.check.unlisted},
                                  {"outside", d.check.outside},
                                  {"unverifiable", unverifiable}});
  }
  if (report.lock) {
    nlohmann::json other = nlohmann::json::array();
    for (auto& v : report.lock->other_version)
      other.push_back({{"name", v.name}, {"installed", v.installed}, {"locked", v.locked}});
    j["lock"] = {{"file", lock_file},
                 {"missing", report.lock->missing},
                 {"extra", report.lock->extra},
                 {"other_version", other}};
  }
  return j;
}

LockDrift compare_with_lock(const std::vector<InstalledDist>& installed, const std::vector<LockEntry>& entries) {
  LockDrift drift;
  std::map<std::string, const InstalledDist*> have;
  for (auto& d : installed) have[normalize_name(d.name)] = &d;
  std::map<std::string, const LockEntry*> want;
  for (auto& e : entries) want[normalize_name(e.name)] = &e;
  for (auto& [name, e] : want) {
    auto it = have.find(name);
    if (it == have.end()) drift.missing.push_back(e->name + "==" + e->version);
    else if (!same_version(it->second->version, e->version))
      drift.other_version.push_back({e->name, it->second->version, e->version});
  }
  for (auto& [name, d] : have)
    if (!want.count(name)) drift.extra.push_back(d->name + "==" + d->version);
  return drift;
}

}  // namespace provkit::pyenv
