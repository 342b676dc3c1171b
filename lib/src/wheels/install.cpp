#include "provkit/wheels/install.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "provkit/error.hpp"
#include "provkit/pyspec/package.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/file_name.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/wheels/record.hpp"

namespace provkit::wheels {

using namespace pyspec;

namespace {

// A .dist-info's METADATA, WHEEL or entry_points.txt, at most this long.
constexpr std::size_t kMaxMetadata = 16u << 20;

[[noreturn]] void bad_wheel(const std::string& wheel, const std::string& what) {
  throw Error(ExitCode::check_failed, wheel + ": " + what);
}

// Writes bytes to a new file (replacing one that exists, a link as a link) of exactly `mode`, in the directory
// `to.dir` that was opened below the environment's root.
void write_new_file(const FileAt& to, const std::string& content, mode_t mode) {
  ::unlinkat(to.dir, to.name.c_str(), 0);
  util::Fd fd(::openat(to.dir, to.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd)
    throw Error(ExitCode::check_failed, to.shown.string() + ": cannot create: " + util::describe_open_error(errno));
  if (::fchmod(fd.get(), mode) != 0)  // the umask took bits off that `mode` has (pip's launchers: r-x for all)
    throw Error(ExitCode::check_failed, to.shown.string() + ": cannot set its mode: " + std::strerror(errno));
  if (util::write_all(fd.get(), content) != 0 || fd.close() != 0)
    throw Error(ExitCode::check_failed, to.shown.string() + ": write error");
}

using util::trim;

// RECORD's "sha256=..." of `content`.
std::string content_hash(const std::string& content) {
  util::Hasher h;
  h.update(content);
  return record_hash(h.raw_digest());
}

// The name of the file `path` names (after its last '/').
std::string base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

std::vector<EntryPoint> launchers_as_pip_names_them(const std::vector<EntryPoint>& entry_points,
                                                    const std::string& python_xy) {
  // `stem`, then nothing, or digits, or (with `dotted`) digits "." digits, after `sep`: pip, pip3, pip3.11;
  // easy_install, easy_install-3.11.
  auto versioned = [](std::string_view name, std::string_view stem, std::string_view sep, bool dotted_only) {
    if (name.substr(0, stem.size()) != stem) return false;
    std::string_view rest = name.substr(stem.size());
    if (rest.empty()) return true;
    if (rest.substr(0, sep.size()) != sep) return false;
    rest.remove_prefix(sep.size());
    auto digits = [](std::string_view d) {
      return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos) return !dotted_only && digits(rest);
    return digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
  };
  auto console_value = [&](const std::string& name) -> std::string {
    for (const auto& ep : entry_points)
      if (!ep.gui && ep.name == name) return ep.value;
    return {};
  };
  const std::string major = python_xy.substr(0, python_xy.find('.'));
  const std::string pip = console_value("pip"), easy_install = console_value("easy_install");
  std::vector<EntryPoint> out;
  if (!pip.empty())
    for (const auto& name : {std::string("pip"), "pip" + major, "pip" + python_xy}) out.push_back({name, pip, false});
  if (!easy_install.empty())
    for (const auto& name : {std::string("easy_install"), "easy_install-" + python_xy})
      out.push_back({name, easy_install, false});
  for (const auto& ep : entry_points) {
    bool replaced = !ep.gui && ((!pip.empty() && versioned(ep.name, "pip", "", false)) ||
                                (!easy_install.empty() && versioned(ep.name, "easy_install", "-", true)));
    if (!replaced) out.push_back(ep);
  }
  return out;
}

std::string script_shebang(const std::string& python) {
  if (python.size() + 2 > 127 || python.find(' ') != std::string::npos) {
    std::string quoted;
    for (char c : python) quoted += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
    return "#!/bin/sh\n'''exec' '" + quoted + "' \"$0\" \"$@\"\n' '''\n";
  }
  return "#!" + python + "\n";
}

std::string launcher_script(const std::string& python, const std::string& entry_point) {
  std::string value = entry_point;
  auto bracket = value.find('[');
  if (bracket != std::string::npos) value = value.substr(0, bracket);
  value = trim(value);
  auto colon = value.find(':');
  if (colon == std::string::npos)
    throw Error(ExitCode::check_failed, "entry point '" + entry_point + "' has no module:attribute");
  std::string module = trim(value.substr(0, colon)), attr = trim(value.substr(colon + 1));
  std::string import_name = attr.substr(0, attr.find('.'));
  return script_shebang(python) +
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "from " +
         module + " import " + import_name +
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
         "    sys.exit(" +
         attr + "())\n";
}

std::vector<EntryPoint> script_entry_points(const std::string& text) {
  std::vector<EntryPoint> out;
  std::istringstream in(text);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = trim(line.substr(1, line.find(']') - 1));
      continue;
    }
    if (section != "console_scripts" && section != "gui_scripts") continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    out.push_back({trim(line.substr(0, eq)), trim(line.substr(eq + 1)), section == "gui_scripts"});
  }
  return out;
}

namespace {

// "demo-1.0.dist-info" and METADATA must name the project and version the
// wheel's file name (and so the lock entry) says.
void check_identity(const CacheEntry& entry, const std::string& wheel) {
  const std::string& dist_info = entry.info.dist_info;
  auto wn = parse_wheel_name(wheel);
  if (!wn) bad_wheel(wheel, "not a wheel file name");
  std::string stem = dist_info.substr(0, dist_info.size() - 10);
  auto dash = stem.find('-');
  std::string name = stem.substr(0, dash), version = dash == std::string::npos ? "" : stem.substr(dash + 1);
  const std::string says = " the file name says " + wn->name + " " + wn->version;
  // The name headers are installed under (include/site/pythonX.Y/NAME): a distribution name by its grammar.
  if (!is_distribution_name(name)) bad_wheel(wheel, "holds " + dist_info + ", which names no distribution; refused");
  if (normalize_name(name) != normalize_name(wn->name) || !same_version(version, wn->version))
    bad_wheel(wheel, "holds " + dist_info + ", but" + says + "; refused");
  std::string metadata = util::Root(entry.tree).read_if_present(entry.tree / dist_info / "METADATA", kMaxMetadata);
  if (metadata.empty()) bad_wheel(wheel, dist_info + " has no METADATA");
  std::string md_name = metadata_header(metadata, "Name"), md_version = metadata_header(metadata, "Version");
  if (normalize_name(md_name) != normalize_name(wn->name) || !same_version(md_version, wn->version))
    bad_wheel(wheel, dist_info + "/METADATA names " + md_name + " " + md_version + ", but" + says + "; refused");
}

}  // namespace

InstallPlan plan_install(const CacheEntry& entry, const std::string& wheel, const InstallScheme& layout) {
  const auto& info = entry.info;
  const std::string dist_info = info.dist_info;
  const std::string data_dir = dist_info.substr(0, dist_info.size() - 10) + ".data";
  check_identity(entry, wheel);

  // WHEEL: version check and purelib/platlib root.
  const util::Root tree(entry.tree);  // the cache entry's files, read without following a link
  std::string wheel_meta = tree.read(entry.tree / dist_info / "WHEEL", kMaxMetadata);
  bool purelib = true;
  {
    std::istringstream in(wheel_meta);
    bool saw_version = false;
    for (std::string line; std::getline(in, line);) {
      line = trim(line);
      if (line.rfind("Wheel-Version:", 0) == 0) {
        saw_version = true;
        auto v = trim(line.substr(14));
        if (v.substr(0, v.find('.')) != "1")
          bad_wheel(wheel, "Wheel-Version " + v + " is not supported (major 1 only)");
      } else if (line.rfind("Root-Is-Purelib:", 0) == 0) {
        auto v = trim(line.substr(16));
        purelib = v == "true" || v == "True";
      }
    }
    if (!saw_version) bad_wheel(wheel, "WHEEL has no Wheel-Version");
  }
  InstallPlan plan;
  plan.dist_info = dist_info;
  const fs::path root = purelib ? layout.purelib : layout.platlib;
  plan.root = root;
  std::string dist_name = dist_info.substr(0, dist_info.find('-'));
  // Every destination is a lexically normal base joined with a checked relative name, so it is normal
  // itself: compared with the skeleton as it is, with no per-file normalisation (torch has 15,000 files).
  std::unordered_set<std::string> skeleton;
  for (const auto& p : layout.skeleton) skeleton.insert(p.lexically_normal().native());
  auto check_not_skeleton = [&](const fs::path& dest, const std::string& from) {
    if (skeleton.count(dest.native()))
      bad_wheel(wheel, from + " would replace the environment's own " + dest.lexically_relative(layout.root).string() +
                           "; refused");
  };
  const fs::path root_n = root.lexically_normal(), purelib_n = layout.purelib.lexically_normal(),
                 platlib_n = layout.platlib.lexically_normal(), scripts_n = layout.scripts.lexically_normal(),
                 data_n = layout.data.lexically_normal(),
                 headers_n = (layout.root / "include" / "site" / ("python" + layout.python_xy) /
                              normalize_name(dist_name))
                                 .lexically_normal();
  const std::string data_prefix = data_dir + "/";
  const std::string written_here[] = {dist_info + "/RECORD", dist_info + "/INSTALLER", dist_info + "/REQUESTED",
                                      dist_info + "/RECORD.jws", dist_info + "/RECORD.p7s"};

  plan.files.reserve(info.files.size());
  for (const auto& f : info.files) {
    // The cache entry's list is outside data to this step (a shared cache): each name is checked here.
    if (!util::is_safe_relative_path(f.path)) bad_wheel(wheel, "unsafe file name in the cache entry: " + f.path);
    fs::path dest;
    bool is_script = false;
    if (f.path.compare(0, data_prefix.size(), data_prefix) == 0) {
      std::string rest = f.path.substr(data_prefix.size());
      auto slash = rest.find('/');
      if (slash == std::string::npos) bad_wheel(wheel, "file directly in " + data_dir + ": " + f.path);
      std::string key = rest.substr(0, slash), sub = rest.substr(slash + 1);
      if (key == "purelib") dest = purelib_n / sub;
      else if (key == "platlib") dest = platlib_n / sub;
      else if (key == "scripts") dest = scripts_n / sub, is_script = true;
      // The project's normalised name, as uv does and as pip does for a lock
      // that spells names so (uv's, pip-compile's), whatever the dist-info says.
      else if (key == "headers") dest = headers_n / sub;
      else if (key == "data") dest = data_n / sub;
      else bad_wheel(wheel, "unknown .data directory '" + key + "' in " + f.path);
    } else {
      if (std::find(std::begin(written_here), std::end(written_here), f.path) != std::end(written_here))
        continue;  // written below (signatures no longer match the installed RECORD)
      dest = root_n / f.path;
    }
    check_not_skeleton(dest, f.path);
    plan.files.push_back({&f, dest, is_script});
  }

  // Launchers for console and GUI scripts.
  {
    const auto declared = script_entry_points(
        tree.read_if_present(entry.tree / dist_info / "entry_points.txt", kMaxMetadata));
    for (auto& ep : launchers_as_pip_names_them(declared, layout.python_xy)) {
      const std::string& name = ep.name;
      // A file named from the wheel's metadata: one file name by the path rule (no '/', "..", control
      // character or backslash), as every name made from outside data is.
      if (!util::is_safe_file_name(name))
        bad_wheel(wheel, "entry point script name '" + ep.name + "' is not a plain file name");
      fs::path dest = scripts_n / name;
      check_not_skeleton(dest, "entry point '" + ep.name + "'");
      plan.launchers.emplace_back(dest, ep);
    }
  }
  return plan;
}

// The directories of a wheel's files, opened once each before any file is placed: the environment's below
// its root (made where missing) and the cache entry's tree's below the tree. Every directory a file goes to is
// made and opened below the environment's root, and each file is created in it by name: a link planted in the
// environment (site-packages/pkg -> elsewhere, a .dist-info that is a link) fails the install with its
// sentence instead of moving a write outside. Each source directory is opened below the tree (no link on the
// way): the linker takes each file by name in it, so a link swapped into the tree after it was checked
// (WheelCache::changed_files) never moves a read or a link outside.
WheelInstall::WheelInstall(const CacheEntry& entry, const InstallPlan& plan, const InstallScheme& layout,
                           unsigned threads)
    : entry_(entry),
      plan_(plan),
      layout_(layout),
      site_(layout.purelib.lexically_normal()),
      tree_(entry.tree),
      env_(layout.root) {
  std::error_code ec;
  // The one link of the skeleton a path may pass: lib64 -> lib (a platlib under lib64/, as Fedora's
  // interpreters name it), taken as what it is.
  lib64_is_lib_ = fs::read_symlink(layout.root / "lib64", ec) == "lib";
  if (threads > 1) make_dirs_side_by_side(threads);
  target_dirs_.reserve(plan.files.size());
  source_dirs_.reserve(plan.files.size());
  for (const auto& p : plan.files) {
    target_dirs_.push_back(dest_dir_of(p.dest));
    const std::string_view rel = p.file->path;
    const auto slash = rel.rfind('/');
    const std::string_view parent = slash == std::string_view::npos ? std::string_view() : rel.substr(0, slash);
    auto it = source_dir_fds_.find(parent);
    if (it == source_dir_fds_.end())
      it = source_dir_fds_.emplace(std::string(parent), open_source_dir(fs::path(parent))).first;
    source_dirs_.push_back(it->second);
  }
  rows_.resize(plan.files.size());
}

// The directory a plan's parent directory is, lexically normal, lib64/ taken as lib/ where it links there.
fs::path WheelInstall::mapped_dir(std::string_view parent) const {
  fs::path dir = fs::path(parent).lexically_normal();
  if (auto rel = dir.lexically_relative(layout_.root); lib64_is_lib_ && !rel.empty() && *rel.begin() == "lib64") {
    dir = layout_.root / "lib";
    for (auto part = std::next(rel.begin()); part != rel.end(); ++part) dir /= *part;
  }
  return dir;
}

namespace {
// Whether `dir` is made by a walk from the environment's root (the root itself, one level below it, or a path
// not built from it, which the walk refuses) rather than below its parent.
bool made_from_root(const fs::path& dir, const fs::path& root) {
  const fs::path rel = dir.lexically_relative(root);
  return rel.empty() || rel == "." || *rel.begin() == ".." || !rel.has_parent_path();
}
}  // namespace

// Every directory the files go to, with the ones on the way, made level by level, each level's side by side:
// mkdir is most of a warm install's system time (ext4 looks for a free inode for each), and a wheel of
// thousands of directories (torch's) would make them on one thread. open_dir then finds each one open.
void WheelInstall::make_dirs_side_by_side(unsigned threads) {
  std::set<std::string_view> parents;
  for (const auto& p : plan_.files) {
    const std::string_view d = p.dest.native();
    const auto slash = d.rfind('/');
    if (slash != std::string_view::npos) parents.insert(d.substr(0, slash));
  }
  std::set<fs::path> wanted;
  for (const auto parent : parents)
    for (fs::path dir = mapped_dir(parent); !made_from_root(dir, layout_.root); dir = dir.parent_path())
      if (!wanted.insert(dir).second) break;
  std::map<std::ptrdiff_t, std::vector<fs::path>> levels;
  for (const auto& dir : wanted) levels[std::distance(dir.begin(), dir.end())].push_back(dir);
  for (const auto& level : levels) {
    const std::vector<fs::path>& dirs = level.second;  // a plain reference: lambdas capture it (C++17)
    std::vector<int> parent_fds;
    parent_fds.reserve(dirs.size());
    for (const auto& dir : dirs) parent_fds.push_back(open_dir(dir.parent_path()));  // made a level up
    // The level's directories by parent, each parent's on one thread: mkdir takes the parent's lock for
    // writing, so siblings made on several threads would wait on each other.
    std::map<int, std::vector<std::size_t>> by_parent;
    for (std::size_t i = 0; i < dirs.size(); ++i) by_parent[parent_fds[i]].push_back(i);
    std::vector<const std::vector<std::size_t>*> siblings;
    siblings.reserve(by_parent.size());
    for (const auto& p : by_parent) siblings.push_back(&p.second);
    std::vector<util::Fd> made(dirs.size());
    std::vector<int> errors(dirs.size(), 0);
    util::parallel_for(siblings.size(), threads, [&](std::size_t s) {
      for (const std::size_t i : *siblings[s]) {
        made[i] = util::make_dirs_beneath(parent_fds[i], dirs[i].filename());
        if (!made[i]) errors[i] = errno;
      }
    });
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      if (!made[i])
        throw Error(ExitCode::check_failed,
                    dirs[i].string() + ": cannot create directory: " + util::describe_open_error(errors[i]));
      made_dirs_.emplace(dirs[i].string(), std::move(made[i]));
    }
  }
}

// The open directory `dest` goes in, opened (made) the first time a file goes there.
int WheelInstall::dest_dir_of(const fs::path& dest) {
  const std::string_view d = dest.native();
  const auto slash = d.rfind('/');
  const std::string_view parent_text = slash == std::string_view::npos ? std::string_view() : d.substr(0, slash);
  if (auto it = dest_dir_fds_.find(parent_text); it != dest_dir_fds_.end()) return it->second;
  const int fd = open_dir(mapped_dir(parent_text));
  dest_dir_fds_.emplace(std::string(parent_text), fd);
  return fd;
}

// Each directory is made (or opened) once, below the nearest one already open: one openat per directory
// rather than a walk from the root for each (a wheel of 5,000 directories).
int WheelInstall::open_dir(const fs::path& dir) {
  if (auto it = made_dirs_.find(dir.string()); it != made_dirs_.end()) return it->second.get();
  util::Fd made;
  if (made_from_root(dir, layout_.root)) made = env_.make_dirs(dir);
  else {
    const int parent_fd = open_dir(dir.parent_path());
    made = util::make_dirs_beneath(parent_fd, dir.filename());
    if (!made)
      throw Error(ExitCode::check_failed,
                  dir.string() + ": cannot create directory: " + util::describe_open_error(errno));
  }
  return made_dirs_.emplace(dir.string(), std::move(made)).first->second.get();
}

int WheelInstall::open_source_dir(const fs::path& parent) {
  util::Fd dir = parent.empty() ? util::Fd(::fcntl(tree_.fd(), F_DUPFD_CLOEXEC, 0))
                                : util::open_beneath(tree_.fd(), parent, O_PATH | O_DIRECTORY);
  if (!dir)
    throw Error(ExitCode::check_failed,
                (entry_.tree / parent).string() + ": cannot open: " + util::describe_open_error(errno));
  source_fds_.push_back(std::move(dir));
  return source_fds_.back().get();
}

// RECORD's path of `dest`: relative to site-packages ("../../../bin/x" for a script).
std::string WheelInstall::record_path(const fs::path& dest) const {
  const std::string& site = site_.native();
  const std::string& d = dest.native();
  // A file below site-packages (nearly all): the rest of its path, which the plan built from a checked
  // relative name (no "." or ".." segment), so it is what lexically_relative would give.
  if (d.size() > site.size() + 1 && d.compare(0, site.size(), site) == 0 && d[site.size()] == '/')
    return d.substr(site.size() + 1);
  return dest.lexically_relative(site_).generic_string();
}

std::vector<std::vector<std::size_t>> WheelInstall::groups_by_directory(std::size_t files_per_group) const {
  std::map<int, std::vector<std::size_t>> by_dir;  // each target directory is opened once: its descriptor names it
  for (std::size_t i = 0; i < target_dirs_.size(); ++i) by_dir[target_dirs_[i]].push_back(i);
  std::vector<std::vector<std::size_t>> dirs;
  dirs.reserve(by_dir.size());
  for (auto& d : by_dir) dirs.push_back(std::move(d.second));
  std::stable_sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::vector<std::vector<std::size_t>> groups;
  for (auto& files : dirs) {
    if (groups.empty() || groups.back().size() >= files_per_group) groups.emplace_back();
    groups.back().insert(groups.back().end(), files.begin(), files.end());
  }
  return groups;
}

void WheelInstall::place_files(const std::vector<std::size_t>& which, Linker& linker) {
  for (const std::size_t i : which) {
    const auto& [file, dest, is_script] = plan_.files[i];
    const UnpackedFile& f = *file;
    const FileAt to{target_dirs_[i], base_name(dest.native()), dest};
    const auto source = [&] { return FileAt{source_dirs_[i], base_name(f.path), entry_.tree / f.path}; };
    // What the cache's file was when unpacked: checked as it is placed (SourceChanged otherwise).
    const auto index = static_cast<std::size_t>(file - entry_.info.files.data());
    const SourceState unpacked{f.size, index < entry_.mtimes.size() ? entry_.mtimes[index] : 0};
    if (is_script) {
      // "#!python" (or "#!pythonw") gets the environment's interpreter.
      std::string content = tree_.read(entry_.tree / f.path, util::kReadFileMax);
      if (content.size() != f.size || (!f.hash.empty() && content_hash(content) != f.hash))
        throw SourceChanged(entry_.tree / f.path);
      if (content.rfind("#!python", 0) == 0) {
        auto nl = content.find('\n');
        content = script_shebang(layout_.python.string()) + (nl == std::string::npos ? "" : content.substr(nl + 1));
        write_new_file(to, content, linker.file_mode(true));
        rows_[i] = {record_path(dest), content_hash(content), std::to_string(content.size())};
        continue;
      }
      if (f.executable) linker.link(source(), to, true, &unpacked);
      else copy_file_contents(source(), to, linker.file_mode(true), &unpacked);  // a private copy, made executable
    } else {
      linker.link(source(), to, f.executable, &unpacked);
    }
    rows_[i] = {record_path(dest), f.hash, std::to_string(f.size)};
  }
}

fs::path WheelInstall::finish(const Linker& linker) {
  std::vector<RecordRow> rows = std::move(rows_);
  const std::string python = layout_.python.string();
  auto write_one = [&](const fs::path& dest, const std::string& content, mode_t mode) {
    write_new_file(FileAt{dest_dir_of(dest), base_name(dest.native()), dest}, content, mode);
    rows.push_back({record_path(dest), content_hash(content), std::to_string(content.size())});
  };
  // pip's launchers (distlib's ScriptMaker): created under the umask, then r-x added for everyone.
  for (const auto& [dest, ep] : plan_.launchers)
    write_one(dest, launcher_script(python, ep.value), linker.file_mode(false) | 0555);
  fs::path installed_dist_info = plan_.root / plan_.dist_info;  // not const: returned, moved
  for (auto [name, content] : {std::pair<const char*, std::string>{"INSTALLER", "envbuild\n"}, {"REQUESTED", ""}})
    write_one(installed_dist_info / name, content, linker.file_mode(false));
  const fs::path record = installed_dist_info / "RECORD";
  rows.push_back({record_path(record), "", ""});
  write_new_file(FileAt{dest_dir_of(record), "RECORD", record}, format_record(rows), linker.file_mode(false));
  return installed_dist_info;
}

fs::path install_wheel(const CacheEntry& entry, const InstallPlan& plan, const InstallScheme& layout, Linker& linker) {
  WheelInstall install(entry, plan, layout);
  for (const auto& group : install.groups_by_directory(install.file_count())) install.place_files(group, linker);
  return install.finish(linker);
}

}  // namespace provkit::wheels
