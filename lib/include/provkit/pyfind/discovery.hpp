#pragma once
// Where a Python interpreter is found: the one rule envbuild (--python, `python find`) and envcheck
// (--python) share, below both (pyenv and host use it; it uses util only, and starts nothing: it only
// looks at files). The places, in order, are those uv, pyenv and conda install into, so that a box set up
// by any of them is found without the user's interactive PATH (systemd and cron lack ~/.local/bin).
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/error.hpp"

namespace provkit::pyfind {

namespace fs = std::filesystem;

// The environment discovery depends on, as the tool read it ("" when unset). The library reads none of
// it itself: a tool fills it (Environment::read with util::env_value_named, then its flags over it).
struct Environment {
  std::string path;                // PATH
  fs::path home;                   // HOME
  fs::path xdg_data_home;          // XDG_DATA_HOME (else HOME/.local/share)
  fs::path xdg_bin_home;           // XDG_BIN_HOME (else HOME/.local/bin): uv's links
  fs::path managed_dir;            // envbuild's own installs: --python-dir, else ENVBUILD_PYTHON_DIR
  fs::path uv_python_install_dir;  // UV_PYTHON_INSTALL_DIR (else XDG_DATA_HOME/uv/python)
  fs::path uv_python_bin_dir;      // UV_PYTHON_BIN_DIR (else XDG_BIN_HOME)
  fs::path pyenv_root;             // PYENV_ROOT (else HOME/.pyenv)
  fs::path conda_prefix;           // CONDA_PREFIX: the active conda environment

  // Each field from `lookup(NAME)` for the variable named beside it above (a tool passes util::env_value_named).
  static Environment read(const std::function<std::string(const char*)>& lookup);
};

// The environment variables Environment::read asks for, in the order docs/envbuild.md lists them.
const std::vector<std::string_view>& environment_variables();

// envbuild's own interpreters (`envbuild python install`): env.managed_dir, else
// XDG_DATA_HOME (~/.local/share)/provkit/pythons.
fs::path managed_dir(const Environment& env);
// uv's installs (`uv python install`): UV_PYTHON_INSTALL_DIR, else XDG_DATA_HOME (~/.local/share)/uv/python.
fs::path uv_install_dir(const Environment& env);
// uv's links to them (python3.12 -> an install): UV_PYTHON_BIN_DIR, else XDG_BIN_HOME, else ~/.local/bin.
fs::path uv_bin_dir(const Environment& env);

// Where a candidate came from (the trace and the tests name it).
enum class Source { given_path, managed, uv_managed, path, uv_link, pyenv, conda, system };
std::string_view source_name(Source s);

struct Candidate {
  fs::path executable;
  Source source;
};

// Every place `spec` is looked for, in order, whether or not a file is there:
// - a path (holds a '/'): that file alone;
// - a command ("python3"; empty means python3): PATH, in order;
// - a version X.Y or X.Y.Z: envbuild's installs (managed_dir: cpython-X.Y*), uv's installs
//   (uv_install_dir: cpython-X.Y*-linux-<machine>-gnu, no +freethreaded/+debug variant), each newest first;
//   then pythonX.Y in uv's links (uv_bin_dir), on PATH (pyenv shims skipped: they run whichever version
//   pyenv has active), in pyenv's versions (PYENV_ROOT or ~/.pyenv, and the root of any shim on PATH;
//   X.Y* newest first), in conda's prefixes (CONDA_PREFIX, then ~/miniforge3, ~/miniconda3, ~/anaconda3
//   and each one's envs/*), /usr/local/bin and /usr/bin.
std::vector<Candidate> candidates(const std::string& spec, const Environment& env);

// The first candidate that is an executable file.
enum class DiscoveryRefusal {
  not_found,       // 2: no candidate is an executable file
  not_executable,  // 2: the path given is not an executable file
};
std::string_view reason_name(DiscoveryRefusal r);
ExitCode exit_code(DiscoveryRefusal r);

// Throws Error(DiscoveryRefusal) naming the spec and, when nothing is found, every place looked in.
Candidate find_python(const std::string& spec, const Environment& env);

}  // namespace provkit::pyfind
