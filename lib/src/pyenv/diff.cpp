#include "provkit/pyenv/diff.hpp"

#include <set>

#include "provkit/error.hpp"
#include "provkit/pyenv/installed.hpp"
#include "provkit/pyenv/venv.hpp"
#include "provkit/pyspec/lock.hpp"
#include "provkit/pyspec/wheel_name.hpp"

namespace provkit::pyenv {

using namespace pyspec;

std::map<std::string, std::pair<std::string, std::string>> read_versions(const fs::path& source) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  std::error_code ec;
  if (fs::is_regular_file(source, ec)) {
    for (auto& e : read_lock(source).entries) out[normalize_name(e.name)] = {e.name, e.version};
    return out;
  }
  if (!fs::is_directory(source, ec))
    throw Error(ExitCode::usage, source.string() + ": neither an environment nor a lock file");
  bool is_site = false;
  for (auto& e : fs::directory_iterator(source, ec))
    if (e.path().extension() == ".dist-info") is_site = true;
  for (auto& d : list_installed(is_site ? source : find_site_packages(source)))
    out[normalize_name(d.name)] = {d.name, d.version};
  return out;
}

std::vector<DiffRow> diff_versions(const std::map<std::string, std::pair<std::string, std::string>>& a,
                                   const std::map<std::string, std::pair<std::string, std::string>>& b) {
  std::set<std::string> names;
  for (auto& [k, v] : a) names.insert(k);
  for (auto& [k, v] : b) names.insert(k);
  std::vector<DiffRow> rows;
  for (auto& n : names) {
    DiffRow r;
    auto ia = a.find(n), ib = b.find(n);
    r.name = ia != a.end() ? ia->second.first : ib->second.first;
    if (ia != a.end()) r.a = ia->second.second;
    if (ib != b.end()) r.b = ib->second.second;
    r.differs = r.a.empty() || r.b.empty() || !same_version(r.a, r.b);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::size_t count_differing(const std::vector<DiffRow>& rows) {
  std::size_t n = 0;
  for (auto& r : rows) n += r.differs;
  return n;
}

nlohmann::json to_json(const std::vector<DiffRow>& rows, const std::string& a, const std::string& b) {
  auto version = [](const std::string& v) { return v.empty() ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::json packages = nlohmann::json::array();
  for (auto& r : rows)
    packages.push_back({{"name", r.name}, {"a", version(r.a)}, {"b", version(r.b)}, {"differs", r.differs}});
  return {{"a", a}, {"b", b}, {"packages", packages}, {"differing", count_differing(rows)}};
}

}  // namespace provkit::pyenv
