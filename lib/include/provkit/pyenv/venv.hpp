#pragma once
// A virtual environment's layout and its creation: pyvenv.cfg, bin/python
// links, lib64 -> lib, activate for bash/zsh.
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "provkit/pyenv/interpreter.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/wheels/install.hpp"

namespace provkit::pyenv {

namespace fs = std::filesystem;

struct VenvLayout {
  fs::path root;
  fs::path purelib, platlib, scripts, data;
  fs::path python;  // root/bin/python
  std::string python_xy;
};

VenvLayout venv_layout(const fs::path& root, const Interpreter& it);

// Creates (or refreshes) the environment skeleton. An existing environment
// made for another X.Y, or a non-empty directory that is not an environment,
// is refused (Error usage).
void create_venv(const VenvLayout& layout, const Interpreter& it, const std::string& tool_version);

// The lock every run that changes or reads an environment takes: an flock(2) on ROOT/.lock, the file uv
// locks an environment with, so that envbuild and uv exclude each other too. The kernel drops it when its
// holder exits or is killed, so a lock file left behind never blocks.
inline constexpr const char* kEnvLockName = ".lock";
class EnvLock {
 public:
  enum class Mode {
    exclusive,  // create: the directory made first when missing; the holder's pid written into the file
    shared,     // verify: nothing is made; an environment that is missing, or whose .lock cannot be
                // opened or made (a read-only environment, another user's), is read without one
  };
  EnvLock() = default;
  bool held() const { return static_cast<bool>(fd_); }

  // Takes the lock of environment `root`, taken before anything in it is read. Exclusive refuses (Error
  // usage) a directory that holds files but neither pyvenv.cfg nor a lock: no environment, and nothing is
  // left in it. When another run holds it,
  // calls `on_wait` once with the holder's pid as its file says (0 when unknown) and waits at most `wait`;
  // then throws Error (check_failed) naming the environment and the holder. A .lock that is a link, a FIFO
  // or a directory is refused with its sentence, never followed.
  static EnvLock take(const fs::path& root, Mode mode, std::chrono::milliseconds wait,
                      const std::function<void(long holder_pid)>& on_wait = {});
  // For a create that ends without an environment: when take() made the directory and nothing but the lock
  // is in it, both go (still locked), so a refused create leaves nothing behind. A run waiting on that lock
  // then takes a new one.
  void remove_if_only_lock() noexcept;

 private:
  util::Fd fd_;
  fs::path root_;
  bool made_root_ = false;
};

// The files create_venv owns (interpreter links, pyvenv.cfg, activation
// scripts, lib64), lexically normal: no wheel may install over them.
std::vector<fs::path> venv_skeleton(const VenvLayout& layout);

// The scheme wheels are installed by into this environment: its directories, bin/python, and venv_skeleton.
wheels::InstallScheme install_scheme(const VenvLayout& layout);

// The base interpreter an environment was made from, found through
// pyvenv.cfg's `home` (python<version>, python3, python there), never a file
// inside the environment. Throws Error(usage) when there is none.
fs::path base_interpreter(const fs::path& root);

// key = value lines of root/pyvenv.cfg; nullopt when absent.
std::optional<std::map<std::string, std::string>> read_pyvenv_cfg(const fs::path& root);

// Finds the site-packages of an existing environment or prefix
// (lib/pythonX.Y/site-packages); throws Error(usage) when there is none.
fs::path find_site_packages(const fs::path& root);

}  // namespace provkit::pyenv
