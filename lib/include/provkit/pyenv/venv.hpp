#pragma once
// A virtual environment's layout and its creation: pyvenv.cfg, bin/python
// links, lib64 -> lib, activate for bash/zsh.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "provkit/pyenv/interpreter.hpp"
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
