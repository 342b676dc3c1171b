#pragma once
// A Python interpreter's facts, asked once and cached per interpreter path +
// mtime: version, implementation, venv install paths, glibc, marker values.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "provkit/pyspec/wheel_tags.hpp"

namespace provkit::pyenv {

namespace fs = std::filesystem;

struct Interpreter {
  fs::path executable;         // the real binary (symlinks and shims resolved)
  std::string implementation;  // sys.implementation.name, "cpython"
  int major = 0, minor = 0, micro = 0;
  std::string releaselevel;  // "final"
  int serial = 0;
  std::string abiflags;  // sys.abiflags ("" or "t" for free-threaded)
  std::string machine;   // platform.machine(), "x86_64"
  std::string glibc;     // "2.36", empty when not glibc
  bool is_64bit = true;
  // Install paths of the venv scheme, relative to the environment root:
  // purelib, platlib, scripts, include, data.
  std::map<std::string, std::string> venv_paths;
  // PEP 508 environment markers (python_version, sys_platform, ...).
  std::map<std::string, std::string> markers;

  std::string version() const;       // "3.12.3"
  std::string xy() const;            // "3.12"
  std::string version_info() const;  // "3.12.3.final.0" (pyvenv.cfg)
};

// What the wheel tags it accepts depend on (pyspec::compatible_tags).
pyspec::TagInputs tag_inputs(const Interpreter& it);

// Asks `python` for its facts (one subprocess), or reads the answer cached in
// `cache_dir` under a key of the resolved path, its mtime and size.
Interpreter query_interpreter(const fs::path& python, const fs::path& cache_dir);

}  // namespace provkit::pyenv
