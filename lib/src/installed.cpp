#include "provkit/installed.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "provkit/error.hpp"
#include "provkit/fsutil.hpp"
#include "provkit/hash.hpp"
#include "provkit/record.hpp"

namespace provkit::py {

namespace {

std::string header_value(const std::string& metadata, const std::string& key) {
  std::istringstream in(metadata);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // end of headers
    if (line.size() > key.size() + 1 && line.compare(0, key.size() + 1, key + ":") == 0) {
      auto v = line.substr(key.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "";
}

std::vector<RecordRow> read_rows(const InstalledDist& d) {
  auto record = d.dist_info / "RECORD";
  return parse_record(read_file(record), record.string());
}

fs::path resolve(const fs::path& site_packages, const std::string& p) {
  fs::path path(p);
  return (path.is_absolute() ? path : site_packages / path).lexically_normal();
}

bool is_bytecode(const fs::path& p) {
  return p.extension() == ".pyc" || p.parent_path().filename() == "__pycache__";
}

}  // namespace

std::vector<InstalledDist> list_installed(const fs::path& site_packages) {
  std::vector<InstalledDist> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(site_packages, ec)) {
    auto name = e.path().filename().string();
    if (name.size() <= 10 || name.substr(name.size() - 10) != ".dist-info" || !e.is_directory(ec)) continue;
    InstalledDist d;
    d.dist_info = e.path();
    if (fs::exists(e.path() / "METADATA", ec)) {
      auto md = read_file(e.path() / "METADATA");
      d.name = header_value(md, "Name");
      d.version = header_value(md, "Version");
    }
    if (d.name.empty() || d.version.empty()) {
      auto stem = name.substr(0, name.size() - 10);
      auto dash = stem.find('-');
      d.name = stem.substr(0, dash);
      d.version = dash == std::string::npos ? "" : stem.substr(dash + 1);
    }
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.dist_info < b.dist_info; });
  return out;
}

std::vector<std::string> all_recorded_paths(const fs::path& site_packages, const std::vector<InstalledDist>& dists) {
  std::vector<std::string> out;
  for (auto& d : dists) {
    std::error_code ec;
    if (!fs::exists(d.dist_info / "RECORD", ec)) continue;
    for (auto& row : read_rows(d)) out.push_back(resolve(site_packages, row.path).string());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DistCheck check_dist(const InstalledDist& dist, const std::vector<std::string>* all_listed) {
  DistCheck check;
  const fs::path site = dist.dist_info.parent_path();
  std::error_code ec;
  if (!fs::exists(dist.dist_info / "RECORD", ec)) {
    check.missing.push_back(dist.dist_info.filename().string() + "/RECORD");
    return check;
  }
  auto rows = read_rows(dist);
  std::set<fs::path> top_dirs;
  for (auto& row : rows) {
    fs::path p = resolve(site, row.path);
    auto rel = p.lexically_relative(site);
    if (!rel.empty() && *rel.begin() != ".." && std::distance(rel.begin(), rel.end()) > 1)
      top_dirs.insert(site / *rel.begin());
    if (row.hash.empty()) continue;  // RECORD itself, bytecode
    struct stat st{};
    if (::lstat(p.c_str(), &st) != 0) {
      check.missing.push_back(row.path);
      continue;
    }
    if (!row.size.empty() && std::to_string(st.st_size) != row.size) {
      check.modified.push_back(row.path);
      continue;
    }
    if (row.hash.rfind("sha256=", 0) == 0) {
      std::string actual;
      try {
        actual = record_hash_of_file(p);
      } catch (const Error&) {
        actual.clear();
      }
      if (actual != row.hash) check.modified.push_back(row.path);
    }
  }
  if (all_listed) {
    for (auto& dir : top_dirs) {
      if (!fs::is_directory(dir, ec)) continue;
      for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (it->is_directory(ec)) {
          if (it->path().filename() == "__pycache__") it.disable_recursion_pending();
          continue;
        }
        if (is_bytecode(it->path())) continue;
        auto p = it->path().lexically_normal().string();
        if (!std::binary_search(all_listed->begin(), all_listed->end(), p))
          check.unlisted.push_back(it->path().lexically_relative(site).string());
      }
    }
    std::sort(check.unlisted.begin(), check.unlisted.end());
  }
  return check;
}

void uninstall_dist(const fs::path& site_packages, const InstalledDist& dist) {
  std::error_code ec;
  std::set<fs::path> dirs;
  if (fs::exists(dist.dist_info / "RECORD", ec)) {
    for (auto& row : read_rows(dist)) {
      fs::path p = resolve(site_packages, row.path);
      fs::remove(p, ec);
      if (p.extension() == ".py") {
        // Bytecode pip or Python wrote beside it.
        auto cache = p.parent_path() / "__pycache__";
        if (fs::is_directory(cache, ec))
          for (auto& e : fs::directory_iterator(cache, ec))
            if (e.path().filename().string().rfind(p.stem().string() + ".", 0) == 0 && e.path().extension() == ".pyc")
              fs::remove(e.path(), ec);
        dirs.insert(cache);
      }
      dirs.insert(p.parent_path());
    }
  }
  fs::remove_all(dist.dist_info, ec);
  // Remove directories left empty, deepest first, never site-packages or above.
  std::vector<fs::path> ordered(dirs.begin(), dirs.end());
  std::sort(ordered.begin(), ordered.end(), [](auto& a, auto& b) { return a.string().size() > b.string().size(); });
  auto site = site_packages.lexically_normal();
  for (auto& d : ordered) {
    for (fs::path cur = d; cur.string().size() > site.string().size() && cur.string().rfind(site.string(), 0) == 0;
         cur = cur.parent_path()) {
      if (!fs::is_directory(cur, ec) || !fs::is_empty(cur, ec)) break;
      fs::remove(cur, ec);
    }
  }
}

}  // namespace provkit::py
