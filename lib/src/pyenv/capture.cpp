#include "provkit/pyenv/capture.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include <algorithm>
#include <mutex>
#include <set>
#include <sstream>

#include "provkit/error.hpp"
#include "provkit/pyenv/installed.hpp"
#include "provkit/pyenv/venv.hpp"
#include "provkit/pyspec/package.hpp"
#include "provkit/pyspec/pep440.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/wheels/install.hpp"
#include "provkit/wheels/record.hpp"
#include "provkit/wheels/zip.hpp"

namespace provkit::pyenv {

using namespace pyspec;
using namespace wheels;

namespace {

struct WheelInfo {
  bool purelib = true;
  std::vector<std::string> tags;
};

// The metadata files of a .dist-info, at most this long.
constexpr std::size_t kMaxMetadataBytes = 16u << 20;

WheelInfo read_wheel_info(const util::Root& site, const fs::path& file) {
  WheelInfo w;
  std::istringstream in(site.read(file, kMaxMetadataBytes));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("Root-Is-Purelib:", 0) == 0) w.purelib = line.find("true") != std::string::npos;
    if (line.rfind("Tag:", 0) == 0) {
      auto t = line.substr(4);
      t.erase(0, t.find_first_not_of(" \t"));
      w.tags.push_back(t);
    }
  }
  return w;
}

// "py3-none-any" + "py2-none-any" -> "py2.py3-none-any" when the set is a product.
std::string compress_tags(const std::vector<std::string>& tags) {
  std::vector<std::string> py, abi, plat;
  auto add = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  std::set<std::string> all;
  for (auto& t : tags) {
    auto a = t.find('-'), b = t.rfind('-');
    if (a == std::string::npos || a == b) continue;
    add(py, t.substr(0, a));
    add(abi, t.substr(a + 1, b - a - 1));
    add(plat, t.substr(b + 1));
    all.insert(t);
  }
  if (all.empty()) return "";
  std::sort(py.begin(), py.end());
  std::sort(abi.begin(), abi.end());
  std::sort(plat.begin(), plat.end());
  if (py.size() * abi.size() * plat.size() != all.size()) return *all.begin();
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (auto& s : v) out += (out.empty() ? "" : ".") + s;
    return out;
  };
  return join(py) + "-" + join(abi) + "-" + join(plat);
}

// A script an installer wrote from "#!python": back to "#!python".
std::string restore_python_shebang(const std::string& content) {
  if (content.rfind("#!/bin/sh\n'''exec' ", 0) == 0) {
    auto end = content.find("\n' '''\n");
    if (end != std::string::npos) return "#!python\n" + content.substr(end + 7);
  }
  if (content.rfind("#!", 0) == 0) {
    auto nl = content.find('\n');
    std::string first = content.substr(0, nl);
    auto interp = first.substr(2, first.find(' ') == std::string::npos ? std::string::npos : first.find(' ') - 2);
    auto base = fs::path(interp).filename().string();
    if (base.rfind("python", 0) == 0)
      return "#!python" + std::string(base.rfind("pythonw", 0) == 0 ? "w" : "") + "\n" +
             (nl == std::string::npos ? "" : content.substr(nl + 1));
  }
  return content;
}

// The packed wheel's file name (pyspec::make_wheel_filename: METADATA's Name and Version, the tags, each by
// its grammar), after the WHEEL Tag lines copied into the new WHEEL and the .dist-info's own name are
// checked to be what they say. Throws Error naming what is refused.
std::string wheel_name_for(const InstalledDist& d, const std::string& dist_info, const std::vector<std::string>& tags,
                           const std::string& tag) {
  for (const auto& t : tags)
    if (!is_wheel_tag(t))
      throw Error(ExitCode::usage, "WHEEL's Tag '" + t.substr(0, 100) + "' is not a wheel tag (PYTHON-ABI-PLATFORM)");
  std::string filename = make_wheel_filename(d.name, d.version, tag);
  const std::string stem = dist_info.substr(0, dist_info.size() - std::string_view(".dist-info").size());
  const auto dash = stem.find('-');
  const std::string dir_name = stem.substr(0, dash),
                    dir_version = dash == std::string::npos ? "" : stem.substr(dash + 1);
  if (normalize_name(dir_name) != normalize_name(d.name) || !same_version(dir_version, d.version))
    throw Error(ExitCode::usage,
                dist_info + " is not the .dist-info of " + d.name + " " + d.version + " (METADATA's Name and Version)");
  return filename;
}

}  // namespace

CaptureResult capture_env(const fs::path& source, const fs::path& wheelhouse, const fs::path& lock_dir, unsigned jobs) {
  fs::path site;
  std::error_code ec;
  bool has_dist_info = false;
  for (auto& e : fs::directory_iterator(source, ec))
    if (e.path().extension() == ".dist-info") has_dist_info = true;
  site = has_dist_info ? source : find_site_packages(source);
  site = fs::absolute(site).lexically_normal();
  // The prefix: <prefix>/lib/pythonX.Y/site-packages or <prefix>/lib/python3/dist-packages.
  fs::path prefix = site.parent_path().parent_path().parent_path();
  std::string python_dir = site.parent_path().filename().string();  // "python3.11"
  fs::create_directories(wheelhouse);

  CaptureResult result;
  // Every read below site-packages and the prefix goes through these roots (the caller named VENV, so links
  // above them are followed): a file RECORD lists that is a link, or lies behind one, is refused, never read
  // (its target could be anything on the box, packed into a wheel that is handed on).
  const util::Root site_root(site), prefix_root(prefix), wheelhouse_root(wheelhouse);
  auto present = [](const util::Root& root, const fs::path& p) {
    struct stat st {};
    return root.stat(p, st);
  };
  auto dists = list_installed(site);
  std::vector<std::optional<LockEntry>> entries(dists.size());
  std::mutex mutex;
  util::parallel_for(dists.size(), jobs, [&](std::size_t i) {
    const InstalledDist& d = dists[i];
    const std::string label = d.name + " " + d.version;
    const std::string dist_info = d.dist_info.filename().string();
    if (!present(site_root, d.dist_info / "RECORD") || !present(site_root, d.dist_info / "WHEEL")) {
      std::lock_guard lock(mutex);
      result.skipped.push_back(label + ": no RECORD or WHEEL (not installed from a wheel)");
      return;
    }
    WheelInfo info = read_wheel_info(site_root, d.dist_info / "WHEEL");
    std::string tag = compress_tags(info.tags);
    if (tag.empty()) {
      if (!info.purelib) {
        std::lock_guard lock(mutex);
        result.skipped.push_back(label + ": WHEEL names no Tag for a platform wheel");
        return;
      }
      tag = "py3-none-any";
    }
    // The wheel's file name is made from METADATA and WHEEL, input like any other: only from parts that
    // pass their grammars, and only for a .dist-info that names the same project and version, or the
    // distribution is skipped (a Version "../../x" is a name, never a path).
    std::string filename;
    try {
      filename = wheel_name_for(d, dist_info, info.tags, tag);
    } catch (const Error& e) {
      std::lock_guard lock(mutex);
      result.skipped.push_back(label + ": " + e.what() + "; no wheel is named from it");
      return;
    }
    std::set<std::string> launchers;
    for (auto& ep :
         launchers_as_pip_names_them(script_entry_points(site_root.read_if_present(d.dist_info / "entry_points.txt",
                                                                                   kMaxMetadataBytes)),
                                     python_dir.substr(6)))
      launchers.insert(ep.name);
    const std::string data = dist_info.substr(0, dist_info.size() - 10) + ".data";
    const std::string dist_name = dist_info.substr(0, dist_info.find('-'));
    const fs::path headers = prefix / "include" / "site" / python_dir / dist_name;

    std::vector<PackEntry> pack;
    std::set<std::string> names;
    auto rows_in = parse_record(site_root.read(d.dist_info / "RECORD", kMaxMetadataBytes << 2),
                                (d.dist_info / "RECORD").string());
    for (auto& row : rows_in) {
      fs::path p = fs::path(row.path).is_absolute() ? fs::path(row.path) : (site / row.path);
      p = p.lexically_normal();
      std::string name;
      if (p.extension() == ".pyc" || p.parent_path().filename() == "__pycache__") continue;
      if (util::is_within(p, site)) {
        name = p.lexically_relative(site).generic_string();
        if (name == dist_info + "/RECORD" || name == dist_info + "/INSTALLER" || name == dist_info + "/REQUESTED" ||
            name == dist_info + "/direct_url.json" || name == dist_info + "/RECORD.jws" ||
            name == dist_info + "/RECORD.p7s")
          continue;
      } else if (util::is_within(p, prefix / "bin")) {
        if (launchers.count(p.filename().string())) continue;
        name = data + "/scripts/" + p.lexically_relative(prefix / "bin").generic_string();
      } else if (util::is_within(p, headers)) {
        name = data + "/headers/" + p.lexically_relative(headers).generic_string();
      } else if (util::is_within(p, prefix)) {
        name = data + "/data/" + p.lexically_relative(prefix).generic_string();
      } else {
        std::lock_guard lock(mutex);
        result.warnings.push_back(label + ": " + row.path + " lies outside " + prefix.string() + "; left out");
        continue;
      }
      if (!names.insert(name).second) continue;
      struct stat st {};
      if (!prefix_root.stat(p, st)) {
        if (errno == ENOENT)
          throw Error(ExitCode::check_failed,
                      label + ": " + row.path + " is missing; the environment has drifted (envbuild verify)");
        throw Error(ExitCode::check_failed, label + ": " + row.path + ": " + util::describe_open_error(errno));
      }
      if (!S_ISREG(st.st_mode)) {  // a link, FIFO or device: never followed, never read
        const int why = S_ISLNK(st.st_mode) ? ELOOP : util::kNotRegularFile;
        throw Error(ExitCode::check_failed, label + ": " + row.path + ": " + util::describe_open_error(why));
      }
      PackEntry e;
      e.name = name;
      e.executable = (st.st_mode & 0111) != 0;
      if (name.rfind(data + "/scripts/", 0) == 0) {
        util::Fd file = prefix_root.open_regular(p, O_RDONLY);
        if (!file)
          throw Error(ExitCode::check_failed, label + ": " + row.path + ": " + util::describe_open_error(errno));
        e.content = restore_python_shebang(util::read_bounded(file.get(), util::kReadFileMax, p.string()));
      } else {
        // Opened once, by pack_wheel, below the prefix: RECORD's row is the hash of the bytes it packs.
        e.source = p;
        e.below = prefix;
      }
      pack.push_back(std::move(e));
    }
    // WHEEL rewritten to say where the wheel came from.
    std::string wheel_text = std::string("Wheel-Version: 1.0\nGenerator: envbuild capture ") + PROVKIT_VERSION +
                             "\nRoot-Is-Purelib: " + (info.purelib ? "true" : "false") + "\n";
    for (auto& t : info.tags) wheel_text += "Tag: " + t + "\n";
    if (info.tags.empty()) wheel_text += "Tag: " + tag + "\n";
    for (auto& e : pack)
      if (e.name == dist_info + "/WHEEL") e.source.clear(), e.content = wheel_text;

    const fs::path out = wheelhouse / filename;
    pack_wheel(wheelhouse_root, out, pack, dist_info + "/RECORD");
    LockEntry entry;
    entry.name = d.name;
    entry.version = parse_version(d.version)->str();
    std::string sha = util::sha256_file(out);
    entry.sha256 = {sha};
    LockedWheel w;
    w.filename = filename;
    w.path = fs::absolute(out).lexically_relative(fs::absolute(lock_dir)).generic_string();
    w.size = fs::file_size(out);
    w.sha256 = sha;
    entry.wheels.push_back(std::move(w));
    entries[i] = std::move(entry);
  });
  for (auto& e : entries)
    if (e) result.entries.push_back(std::move(*e));
  std::sort(result.skipped.begin(), result.skipped.end());
  return result;
}

CaptureResult capture_to_lock(const fs::path& source, const fs::path& wheelhouse, const fs::path& lock, unsigned jobs,
                              const std::string& created_by) {
  bool toml = lock.filename().string().ends_with(".toml") && lock.filename() != ".toml";
  if (toml && !is_pylock_name(lock))
    throw Error(ExitCode::usage, lock.string() +
                                     ": a PEP 751 lock must be named pylock.toml or "
                                     "pylock.NAME.toml (NAME without dots)");
  auto r = capture_env(source, wheelhouse, fs::absolute(lock).parent_path(), jobs);
  util::write_file_atomic(lock, toml ? format_pylock(r.entries, created_by)
                                     : format_requirements(r.entries,
                                                           "written by " + created_by + " from " + source.string()));
  return r;
}

}  // namespace provkit::pyenv
