#include "provkit/python/env_verify.hpp"

#include <map>

#include "provkit/util/parallel.hpp"
#include "provkit/python/venv.hpp"
#include "provkit/python/wheel_name.hpp"

namespace provkit::python {

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

}  // namespace provkit::python
