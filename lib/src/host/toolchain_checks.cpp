// envcheck's build-tool checks: a C compiler that builds a shared object as
// Triton's launchers need (--cc), nvcc and its release (--nvcc), a Python
// with its headers (--python). Where each is found comes from Probes.
#include <stdlib.h>

#include <fstream>

#include "detail.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/json.hpp"

namespace provkit::host::detail {

// version.json of a runfile or package install, else CUDA_VERSION in
// include/cuda.h (wheel-assembled trees).
std::string toolkit_version(const fs::path& root) {
  try {
    auto j = util::parse_untrusted(util::read_file(root / "version.json"), (root / "version.json").string());
    return j.at("cuda_nvcc").at("version").get<std::string>();
  } catch (...) {}
  // cuda.h is over 1 MB; CUDA_VERSION is defined in its first few kilobytes.
  std::ifstream in(root / "include" / "cuda.h", std::ios::binary);
  std::string header(std::size_t{32} * 1024, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  header.resize(static_cast<std::size_t>(in.gcount()));
  static const std::string key = "#define CUDA_VERSION ";
  auto at = header.find(key);
  if (at != std::string::npos) {
    int v = std::atoi(header.c_str() + at + key.size());
    if (v > 0) return cuda_text(v);
  }
  return {};
}

Result cc_check(Probes& probes) {
  Result r{.name = "cc", .status = Status::fail, .rule = Rule::c_compiler_search};
  const auto& compiler = probes.c_compiler();
  if (!compiler) {
    r.reason =
        "no C compiler: CC is not set and neither gcc nor clang is on PATH; Triton will fail with \"Failed to find C "
        "compiler\"";
    r.fix = "install gcc (apt-get install gcc) or set CC to a working C compiler";
    return r;
  }
  r.data = {{"command", compiler->command},
            {"origin", compiler->origin},
            {"path", compiler->path ? compiler->path->string() : ""}};
  if (!compiler->path) {
    r.reason = "CC=" + compiler->command +
               " is not an executable file (nor on PATH); Triton will fail to build its kernels' launchers";
    r.fix = "set CC to a working C compiler, or unset it to use gcc or clang from PATH";
    return r;
  }
  std::string scratch = util::env_value(util::EnvVar::tmpdir);
  scratch = (scratch.empty() ? std::string("/tmp") : scratch) + "/envcheck-cc-XXXXXX";
  const char* dir = ::mkdtemp(scratch.data());
  if (!dir) {
    r.reason = "cannot make a scratch directory to build in (" + scratch + ")";
    return r;
  }
  auto proof = toolchain::prove_compiler(*compiler, dir);
  std::error_code ec;
  fs::remove_all(dir, ec);
  std::string who = compiler->command + " (" + compiler->path->string() + ", from " +
                    (compiler->origin == "CC" ? std::string("CC") : "PATH") + ")";
  if (proof.ok) {
    r.status = Status::pass;
    r.reason = who + " built a shared object with -O3 -shared -fPIC";
    return r;
  }
  std::string first = proof.output.substr(0, proof.output.find('\n'));
  if (first.size() > 300) first = first.substr(0, 300) + "...";
  r.reason = who + " failed to build a shared object with -O3 -shared -fPIC: " + (first.empty() ? "no output" : first);
  r.fix = compiler->origin == "CC"
              ? "fix or unset CC (Triton uses it as it is)"
              : "repair the compiler installation (apt-get install --reinstall " + compiler->origin + ")";
  // The compiler is provkit's cc-shim (installed as gcc or cc): what it lacks is zig, not a gcc package.
  std::error_code real_ec;
  const auto real = fs::canonical(*compiler->path, real_ec).filename().string();
  if (real == "cc-shim" || proof.output.find("cc-shim: ") != std::string::npos) {
    const bool no_zig = proof.output.find("no zig found") != std::string::npos;
    r.fix = compiler->path->string() + " is cc-shim, which compiles with zig" +
            (no_zig ? ", and it found none: install zig (pip install ziglang, or a zig release on PATH) or set "
                      "CC_SHIM_ZIG to its path"
                    : ": its message above says what it lacks (docs/cc-shim.md)");
    r.data["cc_shim"] = true;
  }
  r.data["output"] = proof.output;
  return r;
}

Result nvcc_check(Probes& probes) {
  Result r{.name = "nvcc", .status = Status::fail, .rule = Rule::nvcc_search};
  const auto& nvcc = probes.nvcc();
  if (!nvcc) {
    r.reason = "nvcc is not in $CUDA_HOME/bin, on PATH or in " + (probes.env().cuda_root / "cuda" / "bin").string() +
               "; JIT paths (FlashInfer, sampler kernels) fail with \"Could not find nvcc\"";
    r.fix = "install the CUDA toolkit's compiler (cuda-nvcc-X-Y) and set CUDA_HOME to its root";
    return r;
  }
  auto out = toolchain::run({nvcc->path.string(), "--version"}, std::chrono::seconds(30));
  auto release = toolchain::parse_nvcc_release(out.output);
  r.data = {{"path", nvcc->path.string()}, {"origin", nvcc->origin}, {"release", release.value_or("")}};
  if (out.exit_status != 0 || !release) {
    r.reason = nvcc->path.string() + " (from " + nvcc->origin + ") does not run or does not say its release: " +
               (out.start_error.empty() ? out.output.substr(0, 200) : out.start_error);
    r.fix = "reinstall the CUDA toolkit's nvcc";
    return r;
  }
  r.status = Status::pass;
  r.reason = "nvcc " + *release + " at " + nvcc->path.string() + " (from " + nvcc->origin + ")";
  return r;
}

Result python_check(const std::string& want, Probes& probes) {
  std::string label = want.empty() ? "python3" : want.find('/') != std::string::npos ? want : "python" + want;
  Result r{.name = "python" + (want.empty() ? std::string() : " " + want), .status = Status::fail};
  std::string why;
  auto py = toolchain::probe_python(want, probes.env().python_search, why);
  if (!py) {
    r.reason = why;
    r.fix = "install " + label + " (and " + label + "-dev for its headers)";
    return r;
  }
  r.data = {{"path", py->path.string()},
            {"version", py->version},
            {"include", py->include_dir.string()},
            {"headers", py->has_headers}};
  const bool is_path = want.find('/') != std::string::npos;
  if (!want.empty() && !is_path && !(py->version == want || py->version.starts_with(want + "."))) {
    r.reason = py->path.string() + " is Python " + py->version + ", not " + want;
    r.fix = "install Python " + want;
    return r;
  }
  if (!py->has_headers) {
    r.reason = py->path.string() + " is Python " + py->version + " but " + (py->include_dir / "Python.h").string() +
               " is missing: extensions and Triton's launchers cannot be compiled";
    r.fix = "install the headers (apt-get install python" + py->version.substr(0, py->version.rfind('.')) + "-dev)";
    return r;
  }
  r.status = Status::pass;
  r.reason = py->path.string() + " is Python " + py->version + ", with " + (py->include_dir / "Python.h").string();
  return r;
}

}  // namespace provkit::host::detail
