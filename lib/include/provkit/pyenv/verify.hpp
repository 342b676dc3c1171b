#pragma once
// Proves an environment still holds what was installed: every RECORD file
// present with its hash and size, nothing added inside a distribution's
// directories, and (optionally) the distribution set the lock names.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "provkit/pyenv/installed.hpp"
#include "provkit/pyspec/lock.hpp"

namespace provkit::pyenv {

struct DistReport {
  std::string name, version;
  DistCheck check;
};

struct VersionDrift {
  std::string name, installed, locked;
};

struct LockDrift {
  std::vector<std::string> missing;  // "name==version" the lock wants, not installed
  std::vector<std::string> extra;    // "name==version" installed, not in the lock
  std::vector<VersionDrift> other_version;
  bool clean() const { return missing.empty() && extra.empty() && other_version.empty(); }
};

struct VerifyReport {
  fs::path site_packages;
  std::vector<DistReport> dists;
  std::optional<LockDrift> lock;
  bool clean() const;
};

VerifyReport verify_env(const fs::path& env_root, unsigned jobs);

// verify_env, and the installed set against the lock's entries that apply: markers are judged by the
// interpreter the environment was made from (pyvenv.cfg's home, queried through `cache_dir`), never by
// running a file inside it.
VerifyReport verify_env(const fs::path& env_root, unsigned jobs, const fs::path& lock,
                        const pyspec::LockSelection& selection, const fs::path& cache_dir);

// `envbuild verify --json`: the report with the environment and lock file as given.
nlohmann::json to_json(const VerifyReport& report, const std::string& env, const std::string& lock_file);

// Installed vs locked (names normalised, versions compared as versions).
LockDrift compare_with_lock(const std::vector<InstalledDist>& installed, const std::vector<pyspec::LockEntry>& entries);

}  // namespace provkit::pyenv
