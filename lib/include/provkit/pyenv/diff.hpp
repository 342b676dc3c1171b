#pragma once
// `envbuild diff A B`: the version table of two environments or locks.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace provkit::pyenv {

namespace fs = std::filesystem;

// Normalised name -> {name as written, version}: from an environment (a
// directory with site-packages, or a site-packages directory) or a lock file
// (every entry, markers not evaluated).
std::map<std::string, std::pair<std::string, std::string>> read_versions(const fs::path& env_or_lock);

struct DiffRow {
  std::string name, a, b;  // empty version: absent on that side
  bool differs = false;
};
std::vector<DiffRow> diff_versions(const std::map<std::string, std::pair<std::string, std::string>>& a,
                                   const std::map<std::string, std::pair<std::string, std::string>>& b);
std::size_t count_differing(const std::vector<DiffRow>& rows);

// `envbuild diff --json`: the table of sides `a` and `b` as given (an absent version is null).
nlohmann::json to_json(const std::vector<DiffRow>& rows, const std::string& a, const std::string& b);

}  // namespace provkit::pyenv
