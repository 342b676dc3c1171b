// envcheck: prove the box can run the engine before the engine starts.
// Parses flags into an envcheck::Request, runs it, prints the table or JSON.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cmdline.hpp"
#include "provkit/envcheck.hpp"
#include "provkit/error.hpp"

using namespace provkit;

namespace {

const char* kDescription =
    "envcheck: prove the box can run the engine before the engine starts.\n"
    "With no check options it prints an inventory (driver, GPUs, links, peer-to-peer, compiler, nvcc, Python\n"
    "headers, ROCm). Exit 0 when nothing failed, 1 when a check failed, 2 for a usage or profile error.\n"
    "Stand-in driver libraries: ENVCHECK_NVML_LIB, ENVCHECK_CUDA_LIB, ENVCHECK_NVIDIA_SMI (see docs/envcheck.md).";

// The command-line option a request field is given by.
std::string flag_for(envcheck::Field field) {
  switch (field) {
    case envcheck::Field::cuda: return "--cuda";
    case envcheck::Field::need: return "--need";
    case envcheck::Field::min_cc: return "--min-cc";
    case envcheck::Field::python: return "--python";
    case envcheck::Field::disk: return "--disk";
    case envcheck::Field::file: return "--file";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kDescription, "envcheck");
  cmdline::Convention convention(app);
  envcheck::Request req;
  std::string cuda, min_cc, arch_list, vram_free, profile, python_version;
  std::vector<std::string> needs, disks, ports, files;
  bool json = false, quiet = false;

  app.add_option("--cuda", cuda, "does the driver support a CUDA X.Y runtime?")->type_name("X.Y");
  app.add_flag("--strict", req.strict, "minor-version compatibility fails instead of warning");
  app.add_option("--gpu", req.gpus, "GPU to check, by index or UUID (repeatable; default all)")->type_name("INDEX|UUID");
  app.add_option("--need", needs, "capability the GPUs must have natively: fp8 (cc >= 8.9), nvfp4 (cc >= 10.0)")->type_name("fp8|nvfp4");
  app.add_option("--min-cc", min_cc, "minimum compute capability")->type_name("X.Y");
  app.add_option("--arch-list", arch_list, "a framework's compiled architectures: every GPU must run one")->type_name("sm_80,sm_90,...");
  app.add_option("--vram-free", vram_free, "free memory each selected GPU must have")->type_name("SIZE");
  app.add_flag("--cc", req.cc, "find the C compiler as Triton does and build a tiny shared object with it");
  app.add_flag("--nvcc", req.nvcc, "find nvcc (CUDA_HOME, PATH, /usr/local/cuda) and report its release");
  auto* python = app.add_option("--python", python_version, "find the interpreter (pythonX.Y or python3), its version and Python.h")
                     ->expected(0, 1)->type_name("[X.Y]");
  app.add_option("--lib", req.libs, "would the dynamic loader find this library? (repeatable)")->type_name("NAME");
  app.add_option("--elf", req.elfs, "resolve every DT_NEEDED of this executable or library, recursively (repeatable)")->type_name("PATH");
  app.add_option("--disk", disks, "free space on the file system of PATH (repeatable)")->type_name("PATH=SIZE");
  app.add_option("--port-free", ports, "TCP port that must be free to bind (repeatable)")->type_name("PORT");
  app.add_option("--file", files, "file that must exist, with this sha256 when given (repeatable)")->type_name("PATH[=SHA256]");
  app.add_flag("--rocm", req.rocm, "ROCm runtime libraries and at least one AMD GPU must be present");
  app.add_option("--profile", profile, "run the checks listed in a YAML profile")->type_name("FILE.yaml");
  app.add_flag("--json", json, "print the results as JSON");
  app.add_flag("--quiet", quiet, "print nothing; the exit code says it");
  app.set_version_flag("--version", std::string("envcheck ") + PROVKIT_VERSION);

  if (auto rc = convention.parse(argc, argv)) return *rc;

  try {
    if (!profile.empty()) envcheck::load_profile(profile, req);
    if (!cuda.empty()) envcheck::set_cuda(req, cuda);
    for (const auto& n : needs) envcheck::add_need(req, n);
    if (!min_cc.empty()) envcheck::set_min_cc(req, min_cc);
    if (!arch_list.empty()) envcheck::set_arch_list(req, arch_list);
    if (!vram_free.empty()) envcheck::set_vram_free(req, vram_free);
    if (python->count() > 0) envcheck::set_python(req, python_version);
    for (const auto& d : disks) envcheck::add_disk_assignment(req, d);
    for (const auto& p : ports) envcheck::add_port(req, p);
    for (const auto& f : files) envcheck::add_file_assignment(req, f);
  } catch (const envcheck::InvalidValue& e) {
    std::cerr << "envcheck: " << e.sentence(flag_for(e.field)) << "\n";
    return static_cast<int>(e.code());
  } catch (const Error& e) {
    std::cerr << "envcheck: " << e.what() << "\n";
    return static_cast<int>(e.code());
  }

  auto env = envcheck::Environment::from_process();
  const bool only_inventory = !req.asks_anything() && req.gpus.empty();
  auto results = only_inventory ? envcheck::inventory(env) : envcheck::run_checks(req, env);
  const bool failed = check::any_failed(results);

  if (!quiet) {
    if (json) {
      auto j = check::to_json(results);
      j["envcheck"] = PROVKIT_VERSION;
      j["mode"] = only_inventory ? "inventory" : "checks";
      j["exit_code"] = failed ? 1 : 0;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << check::render_table(results);
    }
  }
  return static_cast<int>(failed ? ExitCode::check_failed : ExitCode::ok);
}
