#include "provkit/pyenv/installed.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/wheels/record.hpp"

namespace provkit::pyenv {

using namespace wheels;

namespace {

// RECORD and METADATA are read below site-packages (the directory the caller named): a .dist-info that
// is a link, or a RECORD that is a link or a FIFO, is refused with a sentence, never followed or waited on.
constexpr std::size_t kMaxRecordBytes = 64u << 20;
constexpr std::size_t kMaxMetadataBytes = 16u << 20;

std::vector<RecordRow> read_rows(const InstalledDist& d) {
  auto record = d.dist_info / "RECORD";
  return parse_record(util::Root(d.dist_info.parent_path()).read(record, kMaxRecordBytes), record.string());
}

// Whether the dist-info holds a RECORD: lstat below site-packages (a link named RECORD counts, and the read
// then refuses it; a .dist-info that is itself a link has none of its own).
bool has_record(const InstalledDist& d) {
  struct stat st {};
  return util::Root(d.dist_info.parent_path()).stat(d.dist_info / "RECORD", st);
}

fs::path resolve(const fs::path& site_packages, const std::string& p) {
  fs::path path(p);
  return (path.is_absolute() ? path : site_packages / path).lexically_normal();
}

bool is_bytecode(const fs::path& p) { return p.extension() == ".pyc" || p.parent_path().filename() == "__pycache__"; }

using util::Fd;

// RECORD paths located inside one environment. Paths are judged in canonical
// form (the environment's own links above site-packages, lib64, resolved
// once); below the root, every directory is opened without following a link,
// so a RECORD row can neither leave the environment nor pass through a link.
class Beneath {
 public:
  Beneath(const fs::path& env_root, const fs::path& site_packages) {
    std::error_code ec;
    root_abs_ = fs::absolute(env_root, ec).lexically_normal();
    root_ = fs::weakly_canonical(env_root, ec);
    site_ = fs::weakly_canonical(site_packages, ec);
  }

  // Where a RECORD row points, canonical when inside the environment.
  fs::path locate(const std::string& row_path) const {
    fs::path p(row_path);
    if (!p.is_absolute()) return (site_ / p).lexically_normal();
    p = p.lexically_normal();
    if (auto rel = inside(p, root_abs_)) return root_ / *rel;
    return p;
  }

  // The parent directory of `path` opened beneath the root, and the last
  // component. outside: the path is not below the root. Otherwise fd < 0 and
  // errno tell why a directory could not be opened (ELOOP: a link).
  struct Parent {
    Fd dir;
    std::string name;
    bool outside = false;
    int error = 0;
  };
  Parent open_parent(const fs::path& path) const {
    Parent out;
    auto rel = inside(path, root_);
    if (!rel || rel->empty()) {
      out.outside = true;
      return out;
    }
    out.name = rel->filename().string();
    Fd root(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (root) out.dir = util::open_beneath(root.get(), rel->parent_path(), O_RDONLY | O_DIRECTORY);
    if (!out.dir) out.error = errno;
    return out;
  }

  const fs::path& site() const { return site_; }

 private:
  // `p` relative to `base` when it lies below it.
  static std::optional<fs::path> inside(const fs::path& p, const fs::path& base) {
    if (!util::is_within(p, base)) return std::nullopt;
    auto rel = p.lexically_relative(base);
    if (rel == ".") return fs::path();
    return rel;
  }
  fs::path root_abs_, root_, site_;
};

}  // namespace

std::vector<InstalledDist> list_installed(const fs::path& site_packages) {
  std::vector<InstalledDist> out;
  std::error_code ec;
  const util::Root site(site_packages);
  for (auto& e : fs::directory_iterator(site_packages, ec)) {
    auto name = e.path().filename().string();
    if (name.size() <= 10 || name.substr(name.size() - 10) != ".dist-info" || !e.is_directory(ec)) continue;
    InstalledDist d;
    d.dist_info = e.path();
    if (auto md = site.read_if_present(e.path() / "METADATA", kMaxMetadataBytes); !md.empty()) {
      d.name = metadata_header(md, "Name");
      d.version = metadata_header(md, "Version");
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
    if (!has_record(d)) continue;
    for (auto& row : read_rows(d)) out.push_back(resolve(site_packages, row.path).string());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DistCheck check_dist(const fs::path& env_root, const InstalledDist& dist, const std::vector<std::string>* all_listed) {
  DistCheck check;
  const fs::path site = dist.dist_info.parent_path();
  const Beneath env(env_root, site);
  std::error_code ec;
  if (!has_record(dist)) {
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
    const auto algorithm = record_hash_algorithm(row.hash);
    if (!algorithm.allowed) {
      check.unverifiable.push_back({row.path, algorithm.name, algorithm.refusal});
      continue;
    }
    auto parent = env.open_parent(env.locate(row.path));
    if (parent.outside) {
      check.outside.push_back(row.path);
      continue;
    }
    if (parent.dir.get() < 0) {
      (parent.error == ENOENT ? check.missing : check.modified).push_back(row.path);
      continue;
    }
    // A link (or anything but a regular file) where RECORD has a file is drift,
    // whatever it points at.
    Fd file(::openat(parent.dir.get(), parent.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (file.get() < 0) {
      (errno == ENOENT ? check.missing : check.modified).push_back(row.path);
      continue;
    }
    struct stat st {};
    if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
        (!row.size.empty() && std::to_string(st.st_size) != row.size)) {
      check.modified.push_back(row.path);
      continue;
    }
    std::string actual;
    try {
      actual = record_hash_of_fd(file.get(), row.path, algorithm.name);
    } catch (const Error&) {
      actual.clear();
    }
    if (actual != row.hash) check.modified.push_back(row.path);
  }
  if (all_listed) {
    for (auto& dir : top_dirs) {
      // A top directory that is a link was reported through its files; its
      // target is not walked.
      if (fs::is_symlink(dir, ec) || !fs::is_directory(dir, ec)) continue;
      for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
           it.increment(ec)) {
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

std::vector<std::string> uninstall_dist(const fs::path& env_root, const InstalledDist& dist) {
  std::vector<std::string> left;
  const Beneath env(env_root, dist.dist_info.parent_path());
  std::set<fs::path> dirs;
  if (has_record(dist)) {
    for (auto& row : read_rows(dist)) {
      fs::path p = env.locate(row.path);
      auto parent = env.open_parent(p);
      if (parent.outside || (parent.dir.get() < 0 && parent.error != ENOENT)) {
        left.push_back(row.path);
        continue;
      }
      if (parent.dir.get() < 0) continue;  // already gone
      // unlinkat removes a link itself, never what it points at; directories stay.
      ::unlinkat(parent.dir.get(), parent.name.c_str(), 0);
      if (p.extension() == ".py") {
        // Bytecode pip or Python wrote beside it.
        Fd cache(::openat(parent.dir.get(), "__pycache__", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (cache.get() >= 0) {
          const std::string prefix = p.stem().string() + ".";
          if (DIR* d = ::fdopendir(::dup(cache.get()))) {
            std::vector<std::string> names;
            while (auto* e = ::readdir(d)) {
              std::string n = e->d_name;
              if (n.rfind(prefix, 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".pyc") == 0)
                names.push_back(n);
            }
            ::closedir(d);
            for (auto& n : names) ::unlinkat(cache.get(), n.c_str(), 0);
          }
          dirs.insert(p.parent_path() / "__pycache__");
        }
      }
      dirs.insert(p.parent_path());
    }
  }
  // The .dist-info itself, below site-packages: a link there goes as a link.
  try {
    util::Root(dist.dist_info.parent_path()).remove_all(dist.dist_info);
  } catch (const Error&) {
    left.push_back(dist.dist_info.filename().string());
  }
  // Remove directories left empty, deepest first, never site-packages or above
  // (all of them were reached without a link above).
  std::vector<fs::path> ordered(dirs.begin(), dirs.end());
  std::sort(ordered.begin(), ordered.end(), [](auto& a, auto& b) { return a.string().size() > b.string().size(); });
  const std::string site = env.site().string();
  for (auto& d : ordered) {
    for (fs::path cur = d; cur.string().size() > site.size() && cur.string().rfind(site + "/", 0) == 0;
         cur = cur.parent_path()) {
      if (::rmdir(cur.c_str()) != 0) break;  // not empty (or gone)
    }
  }
  return left;
}

}  // namespace provkit::pyenv
