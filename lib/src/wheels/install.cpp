#include "provkit/wheels/install.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <regex>
#include <sstream>
#include <unordered_map>

#include "provkit/error.hpp"
#include "provkit/pyspec/package.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/file_name.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
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

// Writes bytes to a new file (replacing one that exists, a link as a link) with `mode`, in the directory
// `to.dir` that was opened below the environment's root.
void write_new_file(const FileAt& to, const std::string& content, mode_t mode) {
  ::unlinkat(to.dir, to.name.c_str(), 0);
  util::Fd fd(::openat(to.dir, to.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd)
    throw Error(ExitCode::check_failed, to.shown.string() + ": cannot create: " + util::describe_open_error(errno));
  if (util::write_all(fd.get(), content) != 0 || fd.close() != 0)
    throw Error(ExitCode::check_failed, to.shown.string() + ": write error");
}

using util::trim;

// pip names its own launchers after the running Python (pip3.X, easy_install-3.X).
std::string versioned_script_name(const std::string& name, const std::string& xy) {
  static const std::regex pip_re(R"(pip3\.\d+)"), easy_re(R"(easy_install-3\.\d+)");
  if (std::regex_match(name, pip_re)) return "pip" + xy;
  if (std::regex_match(name, easy_re)) return "easy_install-" + xy;
  return name;
}

}  // namespace

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
  const auto& skeleton = layout.skeleton;
  auto check_not_skeleton = [&](const fs::path& dest, const std::string& from) {
    auto normal = dest.lexically_normal();
    if (std::find(skeleton.begin(), skeleton.end(), normal) != skeleton.end())
      bad_wheel(wheel, from + " would replace the environment's own " +
                           normal.lexically_relative(layout.root).string() + "; refused");
  };

  for (const auto& f : info.files) {
    fs::path dest;
    bool is_script = false;
    if (f.path.rfind(data_dir + "/", 0) == 0) {
      std::string rest = f.path.substr(data_dir.size() + 1);
      auto slash = rest.find('/');
      if (slash == std::string::npos) bad_wheel(wheel, "file directly in " + data_dir + ": " + f.path);
      std::string key = rest.substr(0, slash), sub = rest.substr(slash + 1);
      if (key == "purelib") dest = layout.purelib / sub;
      else if (key == "platlib") dest = layout.platlib / sub;
      else if (key == "scripts") dest = layout.scripts / sub, is_script = true;
      // The project's normalised name, as uv does and as pip does for a lock
      // that spells names so (uv's, pip-compile's), whatever the dist-info says.
      else if (key == "headers")
        dest = layout.root / "include" / "site" / ("python" + layout.python_xy) / normalize_name(dist_name) / sub;
      else if (key == "data") dest = layout.data / sub;
      else bad_wheel(wheel, "unknown .data directory '" + key + "' in " + f.path);
    } else {
      if (f.path == dist_info + "/RECORD" || f.path == dist_info + "/INSTALLER" || f.path == dist_info + "/REQUESTED" ||
          f.path == dist_info + "/RECORD.jws" || f.path == dist_info + "/RECORD.p7s")
        continue;  // written below (signatures no longer match the installed RECORD)
      dest = root / f.path;
    }
    check_not_skeleton(dest, f.path);
    plan.files.push_back({&f, dest, is_script});
  }

  // Launchers for console and GUI scripts.
  {
    for (auto& ep :
         script_entry_points(tree.read_if_present(entry.tree / dist_info / "entry_points.txt", kMaxMetadata))) {
      std::string name = versioned_script_name(ep.name, layout.python_xy);
      // A file named from the wheel's metadata: one file name by the path rule (no '/', "..", control
      // character or backslash), as every name made from outside data is.
      if (!util::is_safe_file_name(name))
        bad_wheel(wheel, "entry point script name '" + ep.name + "' is not a plain file name");
      fs::path dest = layout.scripts / name;
      check_not_skeleton(dest, "entry point '" + ep.name + "'");
      plan.launchers.emplace_back(dest, ep);
    }
  }
  return plan;
}

fs::path install_wheel(const CacheEntry& entry, const InstallPlan& plan, const InstallScheme& layout, Linker& linker) {
  const std::string python = layout.python.string();
  const fs::path site = layout.purelib;
  const util::Root tree(entry.tree);

  std::vector<RecordRow> rows;
  // Every directory a file goes to is made and opened below the environment's root, and each file is
  // created in it by name: a link planted in the environment (site-packages/pkg -> elsewhere, a .dist-info
  // that is a link) fails the install with its sentence instead of moving a write outside.
  const util::Root env(layout.root);
  std::unordered_map<std::string, util::Fd> made_dirs;
  // The one link of the skeleton a path may pass: lib64 -> lib (a platlib under lib64/, as Fedora's
  // interpreters name it), taken as what it is.
  std::error_code ec;
  const bool lib64_is_lib = fs::read_symlink(layout.root / "lib64", ec) == "lib";
  // Each directory is made (or opened) once, below the nearest one already open: one openat per directory
  // rather than a walk from the root for each (a wheel of 5,000 directories).
  std::function<int(const fs::path&)> open_dir = [&](const fs::path& dir) -> int {
    if (auto it = made_dirs.find(dir.string()); it != made_dirs.end()) return it->second.get();
    util::Fd made;
    const fs::path rel = dir.lexically_relative(layout.root);
    // One level below the root, the root itself, or a path not built from it (refused there): from the root.
    if (rel.empty() || rel == "." || *rel.begin() == ".." || !rel.has_parent_path()) made = env.make_dirs(dir);
    else {
      const int parent_fd = open_dir(dir.parent_path());
      made = util::make_dirs_beneath(parent_fd, dir.filename());
      if (!made)
        throw Error(ExitCode::check_failed,
                    dir.string() + ": cannot create directory: " + util::describe_open_error(errno));
    }
    return made_dirs.emplace(dir.string(), std::move(made)).first->second.get();
  };
  // Each parent as the plan spells it, resolved once: the path arithmetic is most of a warm install's user time.
  std::unordered_map<std::string, int> parent_fds;
  auto dest_in = [&](const fs::path& dest) {
    fs::path parent = dest.parent_path();
    auto it = parent_fds.find(parent.native());
    if (it == parent_fds.end()) {
      fs::path dir = parent.lexically_normal();
      if (auto rel = dir.lexically_relative(layout.root); lib64_is_lib && !rel.empty() && *rel.begin() == "lib64") {
        dir = layout.root / "lib";
        for (auto part = std::next(rel.begin()); part != rel.end(); ++part) dir /= *part;
      }
      it = parent_fds.emplace(parent.native(), open_dir(dir)).first;
    }
    return FileAt{it->second, dest.filename().string(), dest};
  };
  // Each source directory of the cache entry's tree opened once below the tree (no link on the way): the
  // linker takes each file by name in it, so a link swapped into the tree after it was checked
  // (WheelCache::changed_files) never moves a read or a link outside.
  std::unordered_map<std::string, util::Fd> source_dirs;
  auto source_in = [&](const UnpackedFile& f) {
    const fs::path rel(f.path);
    const fs::path parent = rel.parent_path();
    auto it = source_dirs.find(parent.native());
    if (it == source_dirs.end()) {
      util::Fd dir = parent.empty() ? util::Fd(::fcntl(tree.fd(), F_DUPFD_CLOEXEC, 0))
                                    : util::open_beneath(tree.fd(), parent, O_PATH | O_DIRECTORY);
      if (!dir)
        throw Error(ExitCode::check_failed,
                    (entry.tree / parent).string() + ": cannot open: " + util::describe_open_error(errno));
      it = source_dirs.emplace(parent.native(), std::move(dir)).first;
    }
    return FileAt{it->second.get(), rel.filename().string(), entry.tree / rel};
  };
  auto record_rel = [&](const fs::path& dest) { return dest.lexically_relative(site).generic_string(); };

  for (const auto& [file, dest, is_script] : plan.files) {
    const UnpackedFile& f = *file;
    const FileAt to = dest_in(dest);
    const fs::path src = entry.tree / f.path;
    if (is_script) {
      // "#!python" (or "#!pythonw") gets the environment's interpreter.
      std::string content = tree.read(src, util::kReadFileMax);
      if (content.rfind("#!python", 0) == 0) {
        auto nl = content.find('\n');
        content = script_shebang(python) + (nl == std::string::npos ? "" : content.substr(nl + 1));
        write_new_file(to, content, 0755);
        util::Hasher h;
        h.update(content);
        rows.push_back({record_rel(dest), record_hash(h.raw_digest()), std::to_string(content.size())});
        continue;
      }
      if (f.executable) {
        linker.link(source_in(f), to);
      } else {
        // A private copy: chmod on a hardlink would change the cache's file too.
        copy_file_contents(source_in(f), to);
        util::Fd copied(::openat(to.dir, to.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (!copied || ::fchmod(copied.get(), 0755) != 0)
          throw Error(ExitCode::check_failed, dest.string() + ": cannot make it executable: " + std::strerror(errno));
      }
      rows.push_back({record_rel(dest), f.hash, std::to_string(f.size)});
      continue;
    }
    linker.link(source_in(f), to);
    rows.push_back({record_rel(dest), f.hash, std::to_string(f.size)});
  }

  for (const auto& [dest, ep] : plan.launchers) {
    std::string content = launcher_script(python, ep.value);
    write_new_file(dest_in(dest), content, 0755);
    util::Hasher h;
    h.update(content);
    rows.push_back({record_rel(dest), record_hash(h.raw_digest()), std::to_string(content.size())});
  }

  fs::path installed_dist_info = plan.root / plan.dist_info;
  for (auto [name, content] : {std::pair<const char*, std::string>{"INSTALLER", "envbuild\n"}, {"REQUESTED", ""}}) {
    fs::path dest = installed_dist_info / name;
    write_new_file(dest_in(dest), content, 0644);
    util::Hasher h;
    h.update(content);
    rows.push_back({record_rel(dest), record_hash(h.raw_digest()), std::to_string(content.size())});
  }
  rows.push_back({record_rel(installed_dist_info / "RECORD"), "", ""});
  write_new_file(dest_in(installed_dist_info / "RECORD"), format_record(rows), 0644);
  return installed_dist_info;
}

}  // namespace provkit::wheels
