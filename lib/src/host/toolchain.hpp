#pragma once
// Finding the build tools an inference engine needs at run time (Triton's C
// compiler, FlashInfer's nvcc, Python headers) and proving they work.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/pyfind/discovery.hpp"
#include "provkit/util/paths.hpp"
#include "provkit/util/process.hpp"

namespace provkit::host::toolchain {

namespace fs = std::filesystem;

// How the toolchain probes run a tool: util::run with stdout and stderr
// captured together, killed after `timeout`.
using util::RunResult;
inline RunResult run(const std::vector<std::string>& argv,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  util::RunOptions options;
  options.timeout = timeout;
  return util::run(argv, options);
}

// util::find_executable, where the toolchain's callers look for it.
using util::find_executable;

// Triton's rule: $CC when set (used as one program path or name), else gcc,
// else clang on PATH.
struct Compiler {
  std::string command;           // as given: "gcc", "/usr/bin/clang", the value of CC
  std::optional<fs::path> path;  // resolved; nullopt when CC names nothing executable
  std::string origin;            // "CC", "gcc" or "clang"
};
std::optional<Compiler> find_c_compiler(std::string_view cc_env, std::string_view path_list);

// Builds a tiny shared object with `-O3 -shared -fPIC` in `workdir`, as Triton
// builds its launcher stubs. ok only when the compiler exits 0 and the .so exists.
struct BuildProof {
  bool ok = false;
  std::string output;  // the compiler's output (the first lines say why it failed)
  fs::path object;
};
BuildProof prove_compiler(const Compiler& cc, const fs::path& workdir);

// nvcc: $CUDA_HOME/bin/nvcc, else PATH, else /usr/local/cuda/bin/nvcc.
struct Nvcc {
  fs::path path;
  std::string origin;  // "CUDA_HOME", "PATH", "/usr/local/cuda"
};
std::optional<Nvcc> find_nvcc(std::string_view cuda_home, std::string_view path_list,
                              const fs::path& default_root = "/usr/local/cuda");
// "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0"; nullopt if absent.
std::optional<std::string> parse_nvcc_release(std::string_view version_output);

// A Python interpreter as envcheck reports it.
struct Python {
  fs::path path;
  std::string version;       // "3.11.7"
  fs::path include_dir;      // sysconfig's include path
  bool has_headers = false;  // include_dir/Python.h exists
};
// Finds `want` (X.Y, a path, or python3 when empty) as envbuild does (pyfind::find_python) and asks it
// for its version and include directory (one subprocess). nullopt when none is found or it does not
// answer; `why` then says which.
std::optional<Python> probe_python(const std::string& want, const pyfind::Environment& search, std::string& why);

// Without running anything: python3 on PATH and a Python.h under its prefix
// or /usr/include, /usr/local/include. For the inventory.
struct PythonLook {
  std::optional<fs::path> interpreter;
  std::optional<fs::path> header;  // .../include/python3.X/Python.h
};
PythonLook look_for_python(std::string_view path_list);

}  // namespace provkit::host::toolchain
