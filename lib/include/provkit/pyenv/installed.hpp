#pragma once
// Distributions installed in a site-packages directory: listing (from
// *.dist-info/METADATA), checking one against its RECORD, and removing one.
#include <filesystem>
#include <string>
#include <vector>

namespace provkit::pyenv {

namespace fs = std::filesystem;

struct InstalledDist {
  std::string name;     // METADATA Name
  std::string version;  // METADATA Version
  fs::path dist_info;   // absolute
};

std::vector<InstalledDist> list_installed(const fs::path& site_packages);

// Drift of one distribution against its RECORD. `unlisted` are files inside
// the distribution's own top-level directories that no RECORD in the
// site-packages lists (bytecode excepted).
// A link where RECORD has a file (or a directory on the way that is a link) is
// `modified`; a RECORD path outside the environment is `outside`, never read.
// A row whose hash names an algorithm the wheel spec does not allow (md5, sha1, an unknown one:
// wheels::record_hash_algorithm) is `unverifiable`: its file cannot be proved, so it is drift too.
struct UnverifiableRow {
  std::string path;       // as RECORD writes it
  std::string algorithm;  // as RECORD names it
  std::string why;
};
struct DistCheck {
  std::vector<std::string> modified, missing, unlisted, outside;
  std::vector<UnverifiableRow> unverifiable;
  bool clean() const {
    return modified.empty() && missing.empty() && unlisted.empty() && outside.empty() && unverifiable.empty();
  }
};

// Paths are reported as RECORD writes them. `all_listed` holds every path
// (lexically normal, absolute) that any RECORD of the site-packages names;
// pass nullptr to skip the unlisted scan.
DistCheck check_dist(const fs::path& env_root, const InstalledDist& dist,
                     const std::vector<std::string>* all_listed_sorted);

// Every absolute, normalised path listed by the RECORDs under site_packages, sorted.
std::vector<std::string> all_recorded_paths(const fs::path& site_packages, const std::vector<InstalledDist>& dists);

// Removes every file RECORD lists (and its bytecode), the dist-info, and
// directories left empty, up to site-packages. Only paths inside `env_root`
// reached without passing through a link are touched (a link itself is
// removed, never followed); the RECORD paths left alone are returned.
std::vector<std::string> uninstall_dist(const fs::path& env_root, const InstalledDist& dist);

}  // namespace provkit::pyenv
