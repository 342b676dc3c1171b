// envcheck: prove the box can run the engine before the engine starts.
// Parses flags into a host::Request, runs it, prints the table or JSON.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include "provkit/cli/convention.hpp"
#include "provkit/cli/output.hpp"
#include "provkit/error.hpp"
#include "provkit/host/envcheck.hpp"
#include "provkit/host/nccl.hpp"
#include "provkit/util/text.hpp"

using namespace provkit;

namespace {

const char* kDescription =
    "envcheck: prove the box can run the engine before the engine starts.\n"
    "With no check options it prints an inventory (driver, GPUs, links, peer-to-peer, compiler, nvcc, Python\n"
    "headers, ROCm). Exit 0 when nothing failed, 1 when a check failed, 2 for a usage or profile error.\n"
    "Stand-in driver libraries: ENVCHECK_NVML_LIB, ENVCHECK_CUDA_LIB, ENVCHECK_NVIDIA_SMI (see docs/envcheck.md).";

// The command-line option a request field is given by: its profile key as a flag.
std::string flag_for(host::Field field) {
  if (field == host::Field::file) return "--file";
  auto key = host::field_key(field);
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

// A row's hint in envcheck's words: the flag that gives the setting the library's sentences leave unnamed.
void say_hint(host::check::Result& r) {
  using host::check::Hint;
  switch (r.hint) {
    case Hint::none: return;
    case Hint::strict: r.reason += "; --strict makes this a failure"; return;
    case Hint::cc: r.reason += "; --cc proves it builds"; return;
    case Hint::allow_no_gpu_code: r.fix += ", or pass --allow-no-gpu-code when a CPU-only set is meant"; return;
    case Hint::pcie_atomics_as_root:
      r.fix = "run envcheck --pcie-atomics as root (sudo): config space past 64 bytes is root's";
      return;
    case Hint::nccl_lib_given: r.reason = "--nccl-lib " + r.reason; return;
    case Hint::nccl_lib: r.fix += ", or give --nccl-lib PATH (or the engine's environment as --python PATH)"; return;
    case Hint::link_test: r.fix += " (--link-test)"; return;
    case Hint::gpu_selection: r.fix += " (--gpu, CUDA_VISIBLE_DEVICES)"; return;
    case Hint::amd_settings:
      r.fix =
          "--need, --min-cc and --arch-list ask about NVIDIA GPUs, and the GPUs here are AMD's: ask with --gfx TARGET "
          "(the gpu amdN rows of envcheck name each one's), --gpu and --vram-free";
      return;
  }
}

int run(int argc, char** argv) {
  CLI::App app(kDescription, "envcheck");
  provkit::cli::Convention convention(app);
  host::Request req;
  std::string cuda, min_cc, arch_list, vram_free, profile, python_version, link_seconds, min_pcie, min_h2d, roce_device;
  std::vector<std::string> needs, disks, ports, files, gfx;
  bool json = false, quiet = false;

  app.add_option("--cuda", cuda, "does the driver support a CUDA X.Y runtime?")->type_name("X.Y");
  app.add_flag("--strict", req.strict, "minor-version compatibility fails instead of warning");
  app.add_option("--gpu", req.gpus, "GPU to check, by index or UUID (repeatable; default all)")
      ->type_name("INDEX|UUID");
  app.add_option("--need", needs, "capability the GPUs must have natively: fp8 (cc >= 8.9), nvfp4 (cc >= 10.0)")
      ->type_name("fp8|nvfp4");
  app.add_option("--min-cc", min_cc, "minimum compute capability")->type_name("X.Y");
  app.add_option("--arch-list", arch_list, "a framework's compiled architectures: every GPU must run one")
      ->type_name("sm_80,sm_90,...");
  app.add_option("--vram-free", vram_free, "free memory each selected GPU must have")->type_name("SIZE");
  app.add_flag("--cc", req.cc, "find the C compiler as Triton does and build a tiny shared object with it");
  app.add_flag("--nvcc", req.nvcc, "find nvcc (CUDA_HOME, PATH, /usr/local/cuda) and report its release");
  auto* python =
      app.add_option(
             "--python", python_version,
             "find the interpreter (X.Y or a path, as envbuild finds it; python3 when bare), its version and Python.h")
          ->expected(0, 1)
          ->type_name("[X.Y|PATH]");
  app.add_option("--lib", req.libs, "would the dynamic loader find this library? (repeatable)")->type_name("NAME");
  app.add_option("--elf", req.elfs, "resolve every DT_NEEDED of this executable or library, recursively (repeatable)")
      ->type_name("PATH");
  app.add_option(
         "--kernels", req.kernels,
         "list the GPU kernels of these libraries (directories walked, DT_NEEDED followed) and judge them per GPU")
      ->type_name("PATH...");
  app.add_flag("--allow-no-gpu-code", req.allow_no_gpu_code,
               "--kernels passes when none of the objects carries GPU code (a CPU-only build meant as one)");
  app.add_option("--disk", disks, "free space on the file system of PATH (repeatable)")->type_name("PATH=SIZE");
  app.add_option("--port-free", ports, "TCP port that must be free to bind (repeatable)")->type_name("PORT");
  std::string wait_seconds;
  app.add_option("--wait", wait_seconds,
                 "ask --port-free and --vram-free again until they hold, for at most SECONDS (then fail as without)")
      ->type_name("SECONDS");
  app.add_option("--file", files, "file that must exist, with this sha256 when given (repeatable)")
      ->type_name("PATH[=SHA256]");
  app.add_option("--gfx", gfx, "every AMD GPU (KFD) must load code built for this target (repeatable)")
      ->type_name("gfx942");
  app.add_flag("--rocm", req.rocm, "ROCm runtime libraries and at least one AMD GPU must be present");
  auto* link_test = app.add_option("--link-test", link_seconds,
                                   "copy host<->GPU and GPU<->GPU for SECONDS per GPU (default 1): GB/s, the PCIe link "
                                   "under load, peer paths")
                        ->expected(0, 1)
                        ->type_name("[SECONDS]");
  app.add_option("--min-pcie", min_pcie, "the link under load must train at least this (runs --link-test)")
      ->type_name("GEN:WIDTH");
  app.add_option("--min-h2d", min_h2d, "host-to-device copies must reach this (runs --link-test)")->type_name("GB/s");
  bool nccl_test = false;
  std::vector<std::pair<host::Field, std::string>> nccl_values;
  auto nccl_option = [&](const char* flag, host::Field field, const char* what, const char* type) {
    app.add_option_function<std::string>(
           flag, [&nccl_values, field](const std::string& v) { nccl_values.emplace_back(field, v); }, what)
        ->type_name(type);
  };
  app.add_flag("--nccl-test", nccl_test,
               "time a bf16 all-reduce through the engine's libnccl over the selected GPUs, one token up to 8192");
  nccl_option("--nccl-lib", host::Field::nccl_lib, "the libnccl.so.2 to load (else --python PATH's, else the system's)",
              "PATH");
  nccl_option("--hidden-size", host::Field::hidden_size, "the model's hidden size: one token is this x 2 bytes", "N");
  nccl_option("--layers", host::Field::layers, "the model's layers: the per-token floor is 2 x N all-reduces", "N");
  nccl_option("--min-busbw", host::Field::min_busbw, "the all-reduce bus bandwidth at 8192 tokens must reach this",
              "GB/s");
  nccl_option("--max-allreduce-us", host::Field::max_allreduce_us, "one token's all-reduce must take at most this",
              "MICROSECONDS");
  nccl_option("--nccl-timeout", host::Field::nccl_timeout, "kill the measurement after this (default 120)", "SECONDS");
  app.add_flag("--pcie-atomics", req.pcie_atomics,
               "every bridge from each GPU to its root port must route PCIe AtomicOps (root reads them)");
  auto* roce =
      app.add_option("--roce", roce_device,
                     "RoCE GID tables and the NCCL_IB_GID_INDEX of this node's IPv4 (every RDMA device, or DEV)")
          ->expected(0, 1)
          ->type_name("[DEV]");
  std::string engine_args;
  app.add_option("--engine-args", engine_args,
                 "the engine's command line ('llama-server -m /models/x.gguf -c 65536 -np 2'): plan its KV cache, "
                 "state and weights on this box's GPUs from the model files it names, as one check row")
      ->type_name("LINE");
  std::vector<std::string> severities;
  app.add_option("--severity", severities,
                 "CHECK=warn: a failure of CHECK (the first word of its CHECK column) is a warning (repeatable)")
      ->type_name("CHECK=warn|fail");
  app.add_option("--profile", profile, "run the checks listed in a YAML profile")->type_name("FILE.yaml");
  std::string print_field;
  app.add_option(
         "--print", print_field,
         "print the data field FIELD of the checks that ran, one value per line (the exit status is still the verdict)")
      ->type_name("FIELD");
  app.add_flag("--json", json, "print the results as JSON");
  bool debug = false;
  app.add_flag("--debug", debug, "trace what each check reads and decides, on stderr (also PROVKIT_LOG=debug)");
  app.add_flag("--quiet", quiet, "print nothing; the exit code says it");
  app.set_version_flag("--version", std::string("envcheck ") + PROVKIT_VERSION);

  if (auto stop = convention.parse(argc, argv)) return cli::finish(*stop, "envcheck", cli::wants_json(argc, argv));
  // A bad value is said naming the flag it came from.
  auto refused = [&](const Error& e) {
    auto* bad = dynamic_cast<const host::InvalidValue*>(&e);
    std::string sentence = bad ? bad->sentence(flag_for(bad->field)) : std::string(e.what());
    std::cerr << cli::sentence("envcheck", sentence);
    if (json)
      cli::JsonLines("envcheck").summary(static_cast<int>(e.code()), e.reason(), nlohmann::json::object(), sentence);
    return static_cast<int>(e.code());
  };
  cli::start_trace("envcheck", debug);

  try {
    if (!profile.empty()) host::load_profile(profile, req);
    if (!cuda.empty()) host::set_cuda(req, cuda);
    for (const auto& n : needs) host::add_need(req, n);
    if (!min_cc.empty()) host::set_min_cc(req, min_cc);
    if (!arch_list.empty()) host::set_arch_list(req, arch_list);
    if (!vram_free.empty()) host::set_vram_free(req, vram_free);
    if (python->count() > 0) host::set_python(req, python_version);
    for (const auto& d : disks) host::add_disk_assignment(req, d);
    for (const auto& p : ports) host::add_port(req, p);
    for (const auto& f : files) host::add_file_assignment(req, f);
    if (link_test->count() > 0) host::set_link_test(req, link_seconds);
    if (!min_pcie.empty()) host::set_min_pcie(req, min_pcie);
    if (!min_h2d.empty()) host::set_min_h2d(req, min_h2d);
    if (roce->count() > 0) req.roce = roce_device;
    req.nccl_test = req.nccl_test || nccl_test;
    for (const auto& [field, value] : nccl_values) host::set_nccl(req, field, value);
    if (!wait_seconds.empty()) host::set_wait(req, wait_seconds);
    if (req.wait && req.ports.empty() && !req.vram_free)  // from the flag or the profile, with the checks of both
      throw Error(ExitCode::usage, wait_seconds.empty()
                                       ? profile + ": 'wait' goes with ports_free or vram_free (what a restart frees)"
                                       : "--wait goes with --port-free or --vram-free (what a restart frees)");
    for (const auto& g : gfx) host::add_gfx(req, g);
    for (const auto& v : severities) host::add_severity_assignment(req, v);
    if (!engine_args.empty()) try {
        host::set_engine_args(req, engine_args);
      } catch (const Error& e) {
        throw Error(e, std::string("--engine-args: ") + e.what());  // the fit domain says what, the tool which flag
      }
  } catch (const Error& e) {
    return refused(e);
  }

  host::Report report;
  try {
    report = host::run(req, host::Environment::from_process());
  } catch (const host::InvalidValue& e) {  // a severity naming no check of this run
    return refused(e);
  }
  for (auto& r : report.results) say_hint(r);
  if (!print_field.empty()) {
    // Values only, for $(...): a check that failed still exits 1, and a field no check has is said, exit 2,
    // so `export X=$(envcheck ... --print F)` under set -e never exports an empty or "null" value.
    auto values = host::field_values(report, print_field);
    const std::string none = "no check that ran has a value for '" + print_field + "'";  // escaped where printed
    if (json) {  // the summary --json always ends in, the values in it
      auto fields = host::to_json(report);
      fields["print"] = {{"field", print_field}, {"values", values}};
      if (report.failed()) return cli::JsonLines("envcheck").summary(1, Reason::check_failed, fields);
      if (values.empty()) return cli::JsonLines("envcheck").summary(2, Reason::usage, fields, none);
      return cli::JsonLines("envcheck").summary(0, std::nullopt, fields);
    }
    // A value is a name from the machine (a device, a path): one line each, never a line or a
    // terminal sequence of its own.
    for (const auto& v : values) std::cout << util::printable(v) << "\n";
    if (report.failed()) {
      if (!quiet) std::cerr << host::check::render_table(report.results);
      return static_cast<int>(ExitCode::check_failed);
    }
    if (values.empty()) {
      std::cerr << cli::sentence("envcheck", none);
      return static_cast<int>(ExitCode::usage);
    }
    return static_cast<int>(ExitCode::ok);
  }
  int code = static_cast<int>(report.failed() ? ExitCode::check_failed : ExitCode::ok);
  if (quiet) return code;
  if (json) return cli::JsonLines("envcheck").summary(code, provkit::Reason::check_failed, host::to_json(report));
  std::cout << host::check::render_table(report.results);
  return code;
}

// The NCCL test's child (host/nccl run_test runs this tool again): measure, saying each step as it starts,
// then the result as one JSON line.
int nccl_worker(const char* options) {
  auto said = [](const std::string& step) { std::cout << "step: " << step << std::endl; };
  auto m = host::nccl::measure(host::nccl::worker_options_from_json(nlohmann::json::parse(options)), said);
  std::cout << host::nccl::to_json(m).dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string_view(argv[1]) == "--nccl-worker") return nccl_worker(argv[2]);
    return run(argc, argv);
  } catch (const std::exception& e) {
    return cli::last_resort("envcheck", cli::wants_json(argc, argv), e.what());
  } catch (...) {
    return cli::last_resort("envcheck", cli::wants_json(argc, argv), "an unknown exception");
  }
}
