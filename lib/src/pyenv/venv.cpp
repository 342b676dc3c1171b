#include "provkit/pyenv/venv.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <sstream>
#include <thread>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::pyenv {

VenvLayout venv_layout(const fs::path& root, const Interpreter& it) {
  VenvLayout l;
  l.root = fs::absolute(root).lexically_normal();
  if (l.root.has_filename() == false) l.root = l.root.parent_path();
  auto rel = [&](const char* key, const std::string& fallback) {
    auto found = it.venv_paths.find(key);
    return l.root / (found != it.venv_paths.end() ? found->second : fallback);
  };
  const std::string sp = "lib/python" + it.xy() + "/site-packages";
  l.purelib = rel("purelib", sp);
  l.platlib = rel("platlib", sp);
  l.scripts = rel("scripts", "bin");
  l.data = rel("data", ".");
  l.data = l.data.lexically_normal();
  if (!l.data.has_filename()) l.data = l.data.parent_path();
  l.python = l.scripts / "python";
  l.python_xy = it.xy();
  return l;
}

std::optional<std::map<std::string, std::string>> read_pyvenv_cfg(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_regular_file(root / "pyvenv.cfg", ec)) return std::nullopt;
  std::map<std::string, std::string> out;
  // Below the environment's root, no link followed, bounded: someone else's env dir is input.
  std::istringstream in(util::Root(root).read(root / "pyvenv.cfg", 1u << 20));
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    out[util::trim(line.substr(0, eq))] = util::trim(line.substr(eq + 1));
  }
  return out;
}

namespace {
std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string activate_script(const VenvLayout& l) {
  const std::string name = l.root.filename().string();
  return R"(# Source this file from bash or zsh: . bin/activate   (written by envbuild)
deactivate () {
    if [ -n "${_OLD_VIRTUAL_PATH:-}" ] ; then
        PATH="${_OLD_VIRTUAL_PATH:-}"
        export PATH
        unset _OLD_VIRTUAL_PATH
    fi
    if [ -n "${_OLD_VIRTUAL_PYTHONHOME:-}" ] ; then
        PYTHONHOME="${_OLD_VIRTUAL_PYTHONHOME:-}"
        export PYTHONHOME
        unset _OLD_VIRTUAL_PYTHONHOME
    fi
    hash -r 2> /dev/null
    if [ -n "${_OLD_VIRTUAL_PS1:-}" ] ; then
        PS1="${_OLD_VIRTUAL_PS1:-}"
        export PS1
        unset _OLD_VIRTUAL_PS1
    fi
    unset VIRTUAL_ENV
    unset VIRTUAL_ENV_PROMPT
    if [ ! "${1:-}" = "nondestructive" ] ; then
        unset -f deactivate
    fi
}

deactivate nondestructive

VIRTUAL_ENV=)" +
         sh_quote(l.root.string()) + R"(
export VIRTUAL_ENV

_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH

if [ -n "${PYTHONHOME:-}" ] ; then
    _OLD_VIRTUAL_PYTHONHOME="${PYTHONHOME:-}"
    unset PYTHONHOME
fi

if [ -z "${VIRTUAL_ENV_DISABLE_PROMPT:-}" ] ; then
    _OLD_VIRTUAL_PS1="${PS1:-}"
    PS1=)" +
         sh_quote("(" + name + ") ") + R"("${PS1:-}"
    export PS1
    VIRTUAL_ENV_PROMPT=)" +
         sh_quote("(" + name + ") ") + R"(
    export VIRTUAL_ENV_PROMPT
fi

hash -r 2> /dev/null
)";
}

void replace_symlink(const fs::path& target, const fs::path& link) {
  std::error_code ec;
  if (fs::is_symlink(link, ec) && fs::read_symlink(link, ec) == target) return;
  auto tmp = util::temp_path_beside(link);
  fs::create_symlink(target, tmp, ec);
  if (ec) throw Error(ExitCode::check_failed, link.string() + ": cannot create link: " + ec.message());
  fs::rename(tmp, link, ec);
  if (ec) throw Error(ExitCode::check_failed, link.string() + ": cannot create link: " + ec.message());
}

// Whether `root` holds anything but the environment's lock file (a directory a first create made and locked
// is still empty).
bool has_entries(const fs::path& root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.path().filename() != kEnvLockName) return true;
  return false;
}

// The pid an exclusive holder wrote into the lock file; 0 when there is none.
long holder_pid(int fd) {
  char buf[32] = {};
  const auto n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  char* end = nullptr;
  const long pid = std::strtol(buf, &end, 10);
  return pid > 0 && end != buf ? pid : 0;
}

// Writes only when the content differs, so a matching environment is left untouched.
void write_if_changed(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && util::read_file(path) == content) return;
  util::write_file_atomic(path, content);
}
}  // namespace

void create_venv(const VenvLayout& l, const Interpreter& it, const std::string& tool_version) {
  std::error_code ec;
  if (auto cfg = read_pyvenv_cfg(l.root)) {
    std::string made = cfg->count("version_info") ? (*cfg)["version_info"] : (*cfg)["version"];
    if (made.rfind(it.xy() + ".", 0) != 0)
      throw Error(ExitCode::usage, l.root.string() + " was made for Python " + made + ", not " + it.version() +
                                       "; remove it or choose another directory");
  } else if (fs::exists(l.root, ec) && has_entries(l.root)) {
    throw Error(ExitCode::usage, l.root.string() + " exists, is not empty and is not an environment (no pyvenv.cfg)");
  }
  // The root as the user named it; the skeleton below it never through a link (a planted
  // site-packages link, FIFO or file fails with its sentence, nothing is made outside).
  fs::create_directories(l.root, ec);
  const util::Root env(l.root);
  for (const fs::path& dir : {l.scripts, l.purelib, l.platlib, l.root / "include"}) env.make_dirs(dir);
  if (it.is_64bit && !fs::exists(l.root / "lib64", ec) && !fs::is_symlink(l.root / "lib64", ec))
    fs::create_symlink("lib", l.root / "lib64", ec);
  replace_symlink(it.executable, l.scripts / "python");
  replace_symlink("python", l.scripts / "python3");
  replace_symlink("python", l.scripts / ("python" + it.xy()));
  std::string cfg = "home = " + it.executable.parent_path().string() + "\n" + "implementation = " +
                    (it.implementation == "cpython" ? std::string("CPython") : it.implementation) + "\n" +
                    "version_info = " + it.version_info() + "\n" + "version = " + it.version() + "\n" +
                    "include-system-site-packages = false\n" + "executable = " + it.executable.string() + "\n" +
                    "envbuild = " + tool_version + "\n";
  write_if_changed(l.root / "pyvenv.cfg", cfg);
  write_if_changed(l.scripts / "activate", activate_script(l));
}

EnvLock EnvLock::take(const fs::path& root, Mode mode, std::chrono::milliseconds wait,
                      const std::function<void(long)>& on_wait) {
  EnvLock lock;
  std::error_code ec;
  const fs::path file = root / kEnvLockName;
  if (mode == Mode::exclusive) {
    // A directory with files but neither pyvenv.cfg nor a lock (every run makes the lock first) is no
    // environment, and no run is making one there: refused before a lock file is left in it.
    if (fs::is_directory(root, ec) && has_entries(root) && !fs::exists(root / "pyvenv.cfg", ec) &&
        !fs::exists(root / kEnvLockName, ec) && !fs::is_symlink(root / kEnvLockName, ec))
      throw Error(ExitCode::usage, root.string() + " exists, is not empty and is not an environment (no pyvenv.cfg)");
    lock.root_ = root;
    lock.made_root_ = !fs::exists(root, ec);
    fs::create_directories(root, ec);  // the root as the user named it (a link there is theirs)
    lock.fd_ = util::Root(root).open_regular(file, O_RDWR | O_CREAT, 0644);
    if (!lock.fd_)
      throw Error(util::file_refusal(errno),
                  file.string() + ": cannot open the environment's lock: " + util::describe_open_error(errno));
  } else {
    if (!fs::is_directory(root, ec)) return lock;
    const util::Root dir(root);
    lock.fd_ = dir.open_regular(file, O_RDWR | O_CREAT, 0644);
    if (!lock.fd_ && (errno == EACCES || errno == EROFS || errno == EPERM)) lock.fd_ = dir.open_regular(file, O_RDONLY);
    if (!lock.fd_) {
      if (errno == EACCES || errno == EROFS || errno == EPERM || errno == ENOENT) return lock;
      throw Error(util::file_refusal(errno),
                  file.string() + ": cannot open the environment's lock: " + util::describe_open_error(errno));
    }
  }
  const int op = mode == Mode::exclusive ? LOCK_EX : LOCK_SH;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  bool told = false;
  for (;;) {
    if (::flock(lock.fd_.get(), op | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK)
      throw Error(ExitCode::check_failed, file.string() + ": cannot lock: " + std::strerror(errno));
    const long pid = holder_pid(lock.fd_.get());
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error(ExitCode::check_failed,
                  root.string() + " is in use by another run" + (pid ? " (pid " + std::to_string(pid) + ")" : "") +
                      " that holds its lock " + file.string() + "; waited " +
                      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(wait).count()) +
                      " s; try again when it has finished");
    if (!told && on_wait) on_wait(pid);
    told = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A run that held it may have removed it (a create refused in a directory it made, remove_if_only_lock):
  // the lock taken is then on a file no longer there, and the lock is taken again from the start.
  struct stat held {
  }, named{};
  if (::fstat(lock.fd_.get(), &held) == 0 &&
      (::lstat(file.c_str(), &named) != 0 || named.st_ino != held.st_ino || named.st_dev != held.st_dev))
    return take(root, mode, wait, on_wait);
  if (mode == Mode::exclusive) {
    // Who holds it, for the sentence of a run that waits (read by holder_pid; the lock is the flock alone).
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(lock.fd_.get(), 0) == 0) (void)!::pwrite(lock.fd_.get(), pid.data(), pid.size(), 0);
  }
  return lock;
}

std::vector<fs::path> venv_skeleton(const VenvLayout& l) {
  std::vector<fs::path> out = {l.root / "pyvenv.cfg", l.root / "lib64", l.python, l.scripts / "python3",
                               l.scripts / ("python" + l.python_xy)};
  // activate is ours; the others are what venv and virtualenv write beside it.
  for (auto name : {"activate", "activate.csh", "activate.fish", "activate.nu", "activate.ps1", "Activate.ps1",
                    "activate.bat", "activate_this.py", "deactivate.bat"})
    out.push_back(l.scripts / name);
  for (auto& p : out) p = p.lexically_normal();
  return out;
}

wheels::InstallScheme install_scheme(const VenvLayout& l) {
  return {l.root, l.purelib, l.platlib, l.scripts, l.data, l.python, l.python_xy, venv_skeleton(l)};
}

fs::path base_interpreter(const fs::path& root) {
  auto cfg = read_pyvenv_cfg(root);
  if (!cfg || !cfg->count("home") || (*cfg)["home"].empty())
    throw Error(ExitCode::usage, root.string() + ": no pyvenv.cfg with a home; not an environment");
  std::error_code ec;
  const fs::path home = (*cfg)["home"];
  const fs::path env = fs::weakly_canonical(root, ec);
  std::string version = cfg->count("version_info") ? (*cfg)["version_info"] : (*cfg)["version"];
  std::vector<std::string> names;
  static const std::regex xy_re(R"(^(\d+)\.(\d+))");
  std::smatch m;
  if (std::regex_search(version, m, xy_re)) names.push_back("python" + m[1].str() + "." + m[2].str());
  names.emplace_back("python3");
  names.emplace_back("python");
  for (auto& name : names) {
    fs::path candidate = fs::canonical(home / name, ec);
    if (ec || !fs::is_regular_file(candidate, ec)) continue;
    // A home inside the environment is a file the environment controls.
    if (util::is_within(candidate, env))
      throw Error(ExitCode::usage, root.string() + ": pyvenv.cfg's home " + home.string() +
                                       " lies inside the environment; refusing to run it");
    return candidate;
  }
  throw Error(ExitCode::usage, root.string() + ": no interpreter in pyvenv.cfg's home " + home.string());
}

fs::path find_site_packages(const fs::path& root) {
  static const std::regex python_dir(R"(python3\.\d+t?)");
  std::error_code ec;
  for (auto lib : {"lib", "lib64"}) {
    for (auto& e : fs::directory_iterator(root / lib, ec)) {
      if (std::regex_match(e.path().filename().string(), python_dir) &&
          fs::is_directory(e.path() / "site-packages", ec))
        return e.path() / "site-packages";
    }
  }
  throw Error(ExitCode::usage, root.string() + ": no lib/python3.X/site-packages here; not an environment");
}

void EnvLock::remove_if_only_lock() noexcept {
  if (!made_root_ || !fd_) return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_, ec))
    if (e.path().filename() != kEnvLockName) return;
  if (ec) return;
  fs::remove(root_ / kEnvLockName, ec);
  fs::remove(root_, ec);
}

}  // namespace provkit::pyenv
