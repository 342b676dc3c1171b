#include "provkit/envcheck.hpp"

#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "provkit/elf.hpp"
#include "provkit/error.hpp"
#include "provkit/fsutil.hpp"
#include "provkit/hash.hpp"
#include "provkit/hostcheck.hpp"
#include "provkit/rocm.hpp"
#include "provkit/toolchain.hpp"

namespace provkit::envcheck {

using check::Result;
using check::Status;
using cudacompat::Version;

// ---- Request ---------------------------------------------------------------

bool Request::asks_anything() const {
  return cuda || !needs.empty() || min_cc || !arch_list.empty() || vram_free || cc || nvcc || python ||
         !libs.empty() || !elfs.empty() || !disks.empty() || !ports.empty() || !files.empty() || rocm;
}

void set_cuda(Request& r, const std::string& text) {
  auto v = cudacompat::parse_version(text);
  if (!v) throw Error(ExitCode::usage, "--cuda wants a CUDA release as X.Y (like 13.0), not '" + text + "'");
  r.cuda = v;
}

void add_need(Request& r, const std::string& text) {
  if (!cudacompat::capability_minimum(text))
    throw Error(ExitCode::usage, "--need knows fp8 and nvfp4, not '" + text + "'");
  if (std::find(r.needs.begin(), r.needs.end(), text) == r.needs.end()) r.needs.push_back(text);
}

void set_min_cc(Request& r, const std::string& text) {
  auto v = cudacompat::parse_version(text);
  if (!v) throw Error(ExitCode::usage, "--min-cc wants a compute capability as X.Y (like 8.9), not '" + text + "'");
  r.min_cc = v;
}

void set_arch_list(Request& r, const std::string& text) { r.arch_list = cudacompat::parse_arch_list(text); }

void set_vram_free(Request& r, const std::string& text) {
  r.vram_free = hostcheck::parse_size(text);
  r.vram_free_text = text;
}

void set_python(Request& r, const std::string& version) {
  if (!version.empty() && !cudacompat::parse_version(version))
    throw Error(ExitCode::usage, "--python wants a version as X.Y (like 3.11), not '" + version + "'");
  r.python = version;
}

void add_disk(Request& r, const std::string& path, const std::string& size) {
  if (path.empty() || size.empty()) throw Error(ExitCode::usage, "--disk wants PATH=SIZE (like /models=200G)");
  r.disks.push_back({path, hostcheck::parse_size(size), size});
}

void add_port(Request& r, const std::string& text) {
  int port = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || p != text.data() + text.size() || port < 1 || port > 65535)
    throw Error(ExitCode::usage, "'" + text + "' is not a TCP port (1-65535)");
  r.ports.push_back(port);
}

void add_file(Request& r, const std::string& path, const std::string& sha256) {
  if (path.empty()) throw Error(ExitCode::usage, "--file wants PATH or PATH=SHA256");
  std::string lower = sha256;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!lower.empty() && !is_hex(lower, 64))
    throw Error(ExitCode::usage, "the sha256 for " + path + " must be 64 hex digits, not '" + sha256 + "'");
  r.files.push_back({path, lower});
}

void add_disk_assignment(Request& r, const std::string& text) {
  auto [path, size] = hostcheck::split_assignment(text);
  if (text.find('=') == std::string::npos) throw Error(ExitCode::usage, "--disk wants PATH=SIZE (like /models=200G), not '" + text + "'");
  add_disk(r, path, size);
}

void add_file_assignment(Request& r, const std::string& text) {
  // Split at the last '=': what follows it must be the sha256.
  if (text.find('=') == std::string::npos) return add_file(r, text, "");
  auto [path, digest] = hostcheck::split_assignment(text);
  add_file(r, path, digest);
}

Environment Environment::from_process() {
  Environment e;
  e.driver = gpu::ProbeOptions::from_environment();
  if (auto v = getenv_str("ENVCHECK_SYSFS_ROOT"); !v.empty()) e.sysfs_root = v;
  if (auto v = getenv_str("ENVCHECK_CUDA_ROOT"); !v.empty()) e.cuda_root = v;
  e.path_env = getenv_str("PATH");
  e.cc_env = getenv_str("CC");
  e.cuda_home = getenv_str("CUDA_HOME");
  e.rocm_path = getenv_str("ROCM_PATH");
  e.ld_library_path = getenv_str("LD_LIBRARY_PATH");
  return e;
}

// ---- Words -----------------------------------------------------------------

namespace {

std::string cc_text(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

std::string gpu_label(const gpu::Device& d) {
  return "GPU " + std::to_string(d.index) + " (" + (d.name.empty() ? "unnamed" : d.name) + ", sm_" +
         std::to_string(d.cc_major) + std::to_string(d.cc_minor) + ")";
}

nlohmann::json device_json(const gpu::Device& d) {
  nlohmann::json j = {{"index", d.index},
                      {"uuid", d.uuid},
                      {"name", d.name},
                      {"compute_capability", d.cc_major >= 0 ? cc_text(d.cc_major, d.cc_minor) : ""},
                      {"pcie", {{"gen_current", d.pcie.gen_current},
                                {"gen_max", d.pcie.gen_max},
                                {"width_current", d.pcie.width_current},
                                {"width_max", d.pcie.width_max}}}};
  j["memory_total"] = d.memory_total ? nlohmann::json(*d.memory_total) : nlohmann::json(nullptr);
  j["memory_free"] = d.memory_free ? nlohmann::json(*d.memory_free) : nlohmann::json(nullptr);
  return j;
}

std::string cuda_text(int encoded) { return cudacompat::from_cuda_int(encoded).str(); }

std::string no_driver_reason(const gpu::Snapshot& s) {
  std::string why = "no NVIDIA driver found: " + s.nvml_error;
  if (!s.smi_error.empty()) why += "; " + s.smi_error;
  return why;
}

const char* kInstallDriver =
    "install the NVIDIA driver (its libnvidia-ml.so.1 and libcuda.so.1), or point ENVCHECK_NVML_LIB / "
    "ENVCHECK_CUDA_LIB at them";

// The lazily probed driver, shared by every GPU check of one run.
class Driver {
 public:
  explicit Driver(const Environment& env) : env_(env) {}
  const gpu::Snapshot& get() {
    if (!snapshot_) snapshot_ = gpu::probe(env_.driver);
    return *snapshot_;
  }

 private:
  const Environment& env_;
  std::optional<gpu::Snapshot> snapshot_;
};

// ---- GPU checks ------------------------------------------------------------

std::string compat_note(const gpu::Snapshot& s, const Environment& env, nlohmann::json& data) {
  std::string note;
  if (!s.libcuda_path.empty() && gpu::is_compat_path(s.libcuda_path)) {
    note = "; the libcuda the engine loads is a forward-compatibility one (" + s.libcuda_path +
           ", cuda-compat): it works only on datacenter GPUs";
    data["compat_loaded"] = s.libcuda_path;
  }
  auto compat = gpu::find_compat_libraries(env.cuda_root);
  for (const auto& c : compat) {
    data["compat_available"].push_back({{"path", c.path.string()}, {"driver", c.driver_version}});
    if (!s.libcuda_path.empty() && fs::path(s.libcuda_path).parent_path() == c.path.parent_path()) continue;
    note += "; a forward-compatibility libcuda " + c.driver_version + " is at " + c.path.parent_path().string() +
            " (cuda-compat, datacenter GPUs only): with that directory on LD_LIBRARY_PATH the engine would load it";
    if (!s.driver_version.empty() && cudacompat::compare_driver_versions(c.driver_version, s.driver_version) <= 0)
      note += ", but it is not newer than the installed driver " + s.driver_version +
              ", so it adds nothing and a mismatch can fail with error 803";
  }
  return note;
}

Result cuda_check(const Request& req, Driver& driver, const Environment& env) {
  Result r;
  r.name = "cuda " + req.cuda->str();
  const auto& s = driver.get();
  r.data = {{"asked", req.cuda->str()}, {"driver_version", s.driver_version},
            {"driver_cuda", s.driver_cuda ? cuda_text(s.driver_cuda) : ""},
            {"libcuda_cuda", s.libcuda_cuda ? cuda_text(s.libcuda_cuda) : ""}, {"libcuda_path", s.libcuda_path}};
  if (s.driver_version.empty() && s.libcuda_cuda == 0) {
    r.status = Status::fail;
    r.rule = "no-driver";
    r.reason = no_driver_reason(s) + "; " + s.libcuda_error;
    auto min = cudacompat::minimum_driver_for(*req.cuda);
    r.fix = std::string("install the NVIDIA driver") + (min ? std::string(" ") + min->driver + " or newer" : "") +
            " (CUDA " + req.cuda->str() + ")";
    return r;
  }
  if (s.libcuda_cuda == 0) {
    // NVML answers but the runtime's entry point does not load: the engine cannot start.
    r.status = Status::fail;
    r.rule = "libcuda-missing";
    r.reason = "driver " + s.driver_version + " (CUDA " + cuda_text(s.driver_cuda) +
               ") is there, but libcuda.so.1 cannot be used: " + s.libcuda_error +
               "; the CUDA runtime of the engine will not find the driver";
    r.fix = "install the driver's user-mode CUDA library (libcuda.so.1, e.g. the libnvidia-compute package of the "
            "same driver branch) or put its directory on the loader path";
    return r;
  }
  // What the engine's runtime sees is libcuda's answer (a compat libcuda included).
  cudacompat::DriverFacts facts{s.driver_version.empty() ? "(unknown version)" : s.driver_version, s.libcuda_cuda};
  auto v = cudacompat::judge_cuda(facts, *req.cuda, req.strict);
  r.status = v.status;
  r.rule = v.rule;
  r.reason = v.reason;
  r.fix = v.fix;
  if (s.driver_cuda && s.driver_cuda != s.libcuda_cuda)
    r.reason += "; the kernel driver (NVML) reports CUDA " + cuda_text(s.driver_cuda) + " but libcuda reports " +
                cuda_text(s.libcuda_cuda);
  r.reason += compat_note(s, env, r.data);
  return r;
}

// The GPUs the checks apply to; unknown selectors become failures.
std::vector<gpu::Device> selected_gpus(const Request& req, const gpu::Snapshot& s, std::vector<Result>& out) {
  if (req.gpus.empty()) return s.devices;
  std::vector<gpu::Device> picked;
  for (const auto& sel : req.gpus) {
    if (const auto* d = gpu::select_device(s.devices, sel)) {
      if (std::none_of(picked.begin(), picked.end(), [&](const gpu::Device& p) { return p.index == d->index; }))
        picked.push_back(*d);
      continue;
    }
    std::string have;
    for (const auto& d : s.devices) have += (have.empty() ? "" : ", ") + std::to_string(d.index) + " " + d.uuid;
    out.push_back({"gpu " + sel, Status::fail,
                   "no GPU matches '" + sel + "' (index or UUID); the driver lists " + (have.empty() ? "none" : have),
                   "name GPUs by UUID (indices can change across boots): see `envcheck` for the list", "gpu-selector",
                   {{"selector", sel}}});
  }
  return picked;
}

void gpu_checks(const Request& req, Driver& driver, std::vector<Result>& out) {
  bool wanted = !req.needs.empty() || req.min_cc || !req.arch_list.empty() || req.vram_free || !req.gpus.empty();
  if (!wanted) return;
  const auto& s = driver.get();
  if (s.driver_version.empty() || s.devices.empty()) {
    out.push_back({"gpu", Status::fail,
                   s.driver_version.empty() ? no_driver_reason(s)
                                            : "driver " + s.driver_version + " lists no GPU",
                   kInstallDriver, "no-gpu", nlohmann::json::object()});
    return;
  }
  auto gpus = selected_gpus(req, s, out);
  const bool only_selection = req.needs.empty() && !req.min_cc && req.arch_list.empty() && !req.vram_free;
  for (const auto& d : gpus) {
    if (only_selection) {
      out.push_back({"gpu " + std::to_string(d.index), Status::pass, gpu_label(d) + ", " + d.uuid + " is present", "",
                     "gpu-selector", device_json(d)});
      continue;
    }
    const Version cc{d.cc_major, d.cc_minor};
    const std::string idx = " gpu" + std::to_string(d.index);
    for (const auto& need : req.needs) {
      auto min = *cudacompat::capability_minimum(need);
      Result r{"need " + need + idx, Status::pass, "", "", need + " needs compute capability >= " + min.str(),
               device_json(d)};
      if (cc >= min) {
        r.reason = gpu_label(d) + " has native " + (need == "fp8" ? "FP8" : "NVFP4") + " arithmetic (compute capability " +
                   cc.str() + " >= " + min.str() + ")";
      } else {
        r.status = Status::fail;
        r.reason = gpu_label(d) + " has no native " + (need == "fp8" ? "FP8" : "NVFP4") + " arithmetic (compute capability " +
                   cc.str() + " < " + min.str() + "); engines fall back to weight-only kernels (" +
                   (need == "fp8" ? "FP8 weights, bf16 arithmetic: slower" : "FP4 weights, higher-precision arithmetic") + ")";
        r.fix = need == "fp8" ? "run a bf16 or weight-only quantised checkpoint on this GPU, or use a GPU of compute capability 8.9 or newer (Ada, Hopper, Blackwell)"
                              : "use a Blackwell GPU (compute capability 10.0 or newer) for NVFP4, or an FP8/bf16 checkpoint here";
      }
      out.push_back(r);
    }
    if (req.min_cc) {
      Result r{"min-cc " + req.min_cc->str() + idx, cc >= *req.min_cc ? Status::pass : Status::fail,
               gpu_label(d) + " has compute capability " + cc.str() + (cc >= *req.min_cc ? " >= " : " < ") + req.min_cc->str(),
               "", "compute capability >= " + req.min_cc->str(), device_json(d)};
      if (r.status == Status::fail) r.fix = "use a GPU of compute capability " + req.min_cc->str() + " or newer";
      out.push_back(r);
    }
    if (!req.arch_list.empty()) {
      std::string list;
      for (const auto& t : req.arch_list) list += (list.empty() ? "" : ",") + t.text;
      auto match = cudacompat::best_match(req.arch_list, cc);
      Result r{"arch-list" + idx, Status::pass, "", "", "cubin of the same major and equal or lower minor, or PTX",
               device_json(d)};
      r.data["arch_list"] = list;
      if (match) {
        r.reason = gpu_label(d) + " runs " + match->text +
                   (match->ptx ? " (PTX, JIT-compiled by the driver at first use)" : " (cubin)") + " from " + list;
        r.data["match"] = match->text;
      } else {
        r.status = Status::fail;
        r.reason = gpu_label(d) + " has no kernel in " + list +
                   " (no cubin sm_" + std::to_string(cc.major) + "x with x <= " + std::to_string(cc.minor) +
                   ", no PTX for " + cc.str() + " or older): expect \"no kernel image is available for execution on the device\"";
        r.fix = "use a build compiled for sm_" + std::to_string(cc.major) + std::to_string(cc.minor) +
                " (e.g. TORCH_CUDA_ARCH_LIST including " + cc.str() + "), or one that carries PTX for an older architecture";
      }
      out.push_back(r);
    }
    if (req.vram_free) {
      Result r{"vram-free" + idx, Status::pass, "", "", "free GPU memory >= " + req.vram_free_text, device_json(d)};
      if (!d.memory_free) {
        r.status = Status::fail;
        r.reason = gpu_label(d) + ": the driver did not report its free memory";
      } else if (*d.memory_free >= *req.vram_free) {
        r.reason = gpu_label(d) + " has " + hostcheck::format_size(*d.memory_free) + " free >= " +
                   hostcheck::format_size(*req.vram_free);
      } else {
        r.status = Status::fail;
        r.reason = gpu_label(d) + " has " + hostcheck::format_size(*d.memory_free) + " free < " +
                   hostcheck::format_size(*req.vram_free) + " needed";
        r.fix = "stop what holds the GPU's memory (nvidia-smi --query-compute-apps=pid,used_memory --format=csv) or pick another GPU";
      }
      out.push_back(r);
    }
  }
}

// ---- Toolchain -------------------------------------------------------------

Result cc_check(const Environment& env) {
  Result r{"cc", Status::fail, "", "", "Triton's rule: $CC, else gcc, else clang", nlohmann::json::object()};
  auto compiler = toolchain::find_c_compiler(env.cc_env, env.path_env);
  if (!compiler) {
    r.reason = "no C compiler: CC is not set and neither gcc nor clang is on PATH; Triton will fail with \"Failed to find C compiler\"";
    r.fix = "install gcc (apt-get install gcc) or set CC to a working C compiler";
    return r;
  }
  r.data = {{"command", compiler->command}, {"origin", compiler->origin},
            {"path", compiler->path ? compiler->path->string() : ""}};
  if (!compiler->path) {
    r.reason = "CC=" + compiler->command + " is not an executable file (nor on PATH); Triton will fail to build its kernels' launchers";
    r.fix = "set CC to a working C compiler, or unset it to use gcc or clang from PATH";
    return r;
  }
  std::string scratch = getenv_str("TMPDIR");
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
  r.fix = compiler->origin == "CC" ? "fix or unset CC (Triton uses it as it is)"
                                    : "repair the compiler installation (apt-get install --reinstall " + compiler->origin + ")";
  r.data["output"] = proof.output;
  return r;
}

Result nvcc_check(const Environment& env) {
  Result r{"nvcc", Status::fail, "", "", "CUDA_HOME, then PATH, then /usr/local/cuda", nlohmann::json::object()};
  auto nvcc = toolchain::find_nvcc(env.cuda_home, env.path_env, env.cuda_root / "cuda");
  if (!nvcc) {
    r.reason = "nvcc is not in $CUDA_HOME/bin, on PATH or in " + (env.cuda_root / "cuda" / "bin").string() + "; JIT paths (FlashInfer, sampler kernels) fail with \"Could not find nvcc\"";
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

Result python_check(const std::string& want, const Environment& env) {
  std::string label = want.empty() ? "python3" : "python" + want;
  Result r{"python" + (want.empty() ? std::string() : " " + want), Status::fail, "", "", "", nlohmann::json::object()};
  std::string why;
  auto py = toolchain::probe_python(want, env.path_env, why);
  if (!py) {
    r.reason = why;
    r.fix = "install " + label + " (and " + label + "-dev for its headers)";
    return r;
  }
  r.data = {{"path", py->path.string()}, {"version", py->version}, {"include", py->include_dir.string()},
            {"headers", py->has_headers}};
  if (!want.empty() && !(py->version == want || py->version.starts_with(want + "."))) {
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

// ---- Libraries -------------------------------------------------------------

std::string skipped_text(const std::vector<elf::Skipped>& skipped) {
  std::string t;
  for (const auto& s : skipped) t += (t.empty() ? "" : "; ") + s.path.string() + " (" + s.why + ")";
  return t;
}

Result lib_check(const std::string& name, const elf::SearchContext& ctx) {
  Result r{"lib " + name, Status::fail, "", "", "LD_LIBRARY_PATH, /etc/ld.so.cache, default directories",
           nlohmann::json::object()};
  auto found = elf::find_library(name, ctx);
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : found.skipped) skipped.push_back({{"path", s.path.string()}, {"why", s.why}});
  r.data["skipped"] = skipped;
  if (found.path) {
    auto id = elf::read_identity(*found.path);
    r.status = Status::pass;
    r.reason = name + " -> " + found.path->string() + " (" + found.via + ", " + elf::describe(*id) + ")";
    if (!found.skipped.empty()) r.reason += "; passed over " + skipped_text(found.skipped);
    r.data["path"] = found.path->string();
    r.data["via"] = found.via;
    r.data["class_machine"] = elf::describe(*id);
    return r;
  }
  r.reason = "the loader would not find " + name + " for " + elf::describe(ctx.want) +
             " programs (searched LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories)";
  if (!found.skipped.empty()) r.reason += "; passed over " + skipped_text(found.skipped);
  r.fix = "install the package that ships " + name +
          ", or add its directory to LD_LIBRARY_PATH (or /etc/ld.so.conf.d/ and run ldconfig)";
  return r;
}

void elf_checks(const std::string& path, const elf::SearchContext& ctx, std::vector<Result>& out) {
  const std::string name = "elf " + path;
  elf::Resolution res;
  try {
    res = elf::resolve_needed(path, ctx);
  } catch (const Error& e) {
    out.push_back({name, Status::fail, std::string("cannot read it: ") + e.what(), "check that the file is a complete ELF executable or shared object",
                   "elf-readable", {{"path", path}}});
    return;
  }
  nlohmann::json resolved = nlohmann::json::array();
  for (const auto& e : res.resolved)
    resolved.push_back({{"name", e.name}, {"path", e.lookup.path->string()}, {"via", e.lookup.via}, {"needed_by", e.needed_by.string()}});
  for (const auto& m : res.missing) {
    std::string reason = m.name + ", needed by " + m.needed_by.string() + ", will not resolve";
    if (!m.lookup.skipped.empty()) reason += "; passed over " + skipped_text(m.lookup.skipped);
    out.push_back({name + ": " + m.name, Status::fail, reason,
                   "install " + m.name + ", or add its directory to the needing object's RUNPATH or LD_LIBRARY_PATH",
                   "DT_NEEDED resolution (RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache, default directories)",
                   {{"name", m.name}, {"needed_by", m.needed_by.string()}}});
  }
  for (const auto& u : res.unreadable)
    out.push_back({name, Status::warn, "a dependency could not be read: " + u, "", "elf-readable", nlohmann::json::object()});
  if (res.missing.empty()) {
    out.push_back({name, Status::pass,
                   "all " + std::to_string(res.resolved.size()) + " needed libraries resolve (recursively)", "",
                   "DT_NEEDED resolution (RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache, default directories)",
                   {{"resolved", resolved}}});
  }
}

// ---- Host gates --------------------------------------------------------------

Result disk_check(const DiskGate& g) {
  Result r{"disk " + g.path, Status::fail, "", "", "free space >= " + g.size_text, {{"path", g.path}, {"need", g.bytes}}};
  std::string why;
  auto free = hostcheck::disk_free(g.path, why);
  if (!free) {
    r.reason = "cannot read the free space: " + why;
    return r;
  }
  r.data["free"] = *free;
  if (*free >= g.bytes) {
    r.status = Status::pass;
    r.reason = hostcheck::format_size(*free) + " free >= " + hostcheck::format_size(g.bytes);
  } else {
    r.reason = "only " + hostcheck::format_size(*free) + " free < " + hostcheck::format_size(g.bytes) + " needed";
    r.fix = "free space on that file system or use another one";
  }
  return r;
}

Result port_check(int port) {
  Result r{"port-free " + std::to_string(port), Status::pass, "", "", "bind(0.0.0.0:PORT) succeeds", {{"port", port}}};
  std::string why;
  if (hostcheck::port_free(port, why)) {
    r.reason = "port " + std::to_string(port) + " is free";
  } else {
    r.status = Status::fail;
    r.reason = "port " + std::to_string(port) + " cannot be bound: " + why;
    r.fix = "stop what listens there (ss -ltnp 'sport = :" + std::to_string(port) + "') or choose another port";
  }
  return r;
}

Result file_check(const FileGate& g) {
  Result r{"file " + g.path, Status::fail, "", "", g.sha256.empty() ? "exists" : "sha256 matches",
           {{"path", g.path}, {"expected_sha256", g.sha256}}};
  std::error_code ec;
  if (!fs::is_regular_file(g.path, ec)) {
    r.reason = g.path + " does not exist (or is not a regular file)";
    r.fix = "put the file in place (e.g. fetch it with hf-fetch)";
    return r;
  }
  if (g.sha256.empty()) {
    r.status = Status::pass;
    r.reason = g.path + " exists";
    return r;
  }
  std::string got;
  try {
    got = sha256_file(g.path);
  } catch (const Error& e) {
    r.reason = e.what();
    return r;
  }
  r.data["sha256"] = got;
  if (got == g.sha256) {
    r.status = Status::pass;
    r.reason = g.path + " has sha256 " + got;
  } else {
    r.reason = g.path + " has sha256 " + got + ", expected " + g.sha256;
    r.fix = "fetch the file again; it is not the expected content";
  }
  return r;
}

// ---- ROCm ------------------------------------------------------------------

struct RocmFacts {
  std::vector<rocm::RuntimeLibrary> libs;
  std::vector<rocm::AmdGpu> gpus;
};
RocmFacts look_at_rocm(const Environment& env, const elf::SearchContext& ctx) {
  return {rocm::find_runtime_libraries(ctx, env.rocm_path), rocm::read_kfd_topology(env.sysfs_root)};
}
std::string rocm_text(const RocmFacts& f, nlohmann::json& data) {
  std::string t;
  for (const auto& l : f.libs) {
    t += (t.empty() ? "" : "; ") + l.name + (l.path ? " at " + l.path->string() : " not found");
    data["libraries"][l.name] = l.path ? nlohmann::json(l.path->string()) : nlohmann::json(nullptr);
  }
  data["gpus"] = nlohmann::json::array();
  std::string g;
  for (const auto& gpu : f.gpus) {
    g += (g.empty() ? "" : ", ") + std::string("node ") + std::to_string(gpu.node) + " " + gpu.gfx_target;
    data["gpus"].push_back({{"node", gpu.node}, {"gfx_target", gpu.gfx_target}, {"gfx_target_version", gpu.gfx_target_version},
                            {"device_id", gpu.device_id}});
  }
  t += "; " + (f.gpus.empty() ? std::string("no AMD GPU in the KFD topology")
                               : std::to_string(f.gpus.size()) + " AMD GPU" + (f.gpus.size() > 1 ? "s" : "") + ": " + g);
  return t;
}

Result rocm_check(const Environment& env, const elf::SearchContext& ctx) {
  auto facts = look_at_rocm(env, ctx);
  Result r{"rocm", Status::pass, "", "", "libamdhip64 and libhsa-runtime64 found, and an AMD GPU in KFD",
           nlohmann::json::object()};
  r.reason = rocm_text(facts, r.data);
  bool libs_ok = std::all_of(facts.libs.begin(), facts.libs.end(), [](const auto& l) { return l.path.has_value(); });
  if (!libs_ok || facts.gpus.empty()) {
    r.status = Status::fail;
    r.fix = !libs_ok ? "install the ROCm runtime (hip-runtime-amd, hsa-rocr) or set ROCM_PATH"
                     : "load the amdgpu kernel driver (modprobe amdgpu) and check /dev/kfd access";
  }
  return r;
}

// The toolkit's release without running nvcc: version.json of a runfile or
// package install, else CUDA_VERSION in include/cuda.h (wheel-assembled trees).
std::string toolkit_version(const fs::path& root) {
  try {
    auto j = nlohmann::json::parse(read_file(root / "version.json"));
    return j.at("cuda_nvcc").at("version").get<std::string>();
  } catch (...) {
  }
  // cuda.h is over 1 MB; CUDA_VERSION is defined in its first few kilobytes.
  std::ifstream in(root / "include" / "cuda.h", std::ios::binary);
  std::string header(32 * 1024, '\0');
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

elf::SearchContext search_context(const Environment& env) {
  auto ctx = elf::loader_context_from_environment();
  ctx.ld_library_path.clear();
  std::size_t start = 0;
  const auto& s = env.ld_library_path;
  while (start <= s.size()) {
    auto colon = s.find(':', start);
    if (colon == std::string::npos) colon = s.size();
    if (colon > start) ctx.ld_library_path.emplace_back(s.substr(start, colon - start));
    start = colon + 1;
  }
  return ctx;
}

}  // namespace

// ---- Runs ------------------------------------------------------------------

std::vector<Result> run_checks(const Request& req, const Environment& env) {
  std::vector<Result> out;
  Driver driver(env);
  if (req.cuda) out.push_back(cuda_check(req, driver, env));
  gpu_checks(req, driver, out);
  if (req.cc) out.push_back(cc_check(env));
  if (req.nvcc) out.push_back(nvcc_check(env));
  if (req.python) out.push_back(python_check(*req.python, env));
  if (!req.libs.empty() || !req.elfs.empty() || req.rocm) {
    auto ctx = search_context(env);
    for (const auto& l : req.libs) out.push_back(lib_check(l, ctx));
    for (const auto& e : req.elfs) elf_checks(e, ctx, out);
    if (req.rocm) out.push_back(rocm_check(env, ctx));
  }
  for (const auto& d : req.disks) out.push_back(disk_check(d));
  for (int p : req.ports) out.push_back(port_check(p));
  for (const auto& f : req.files) out.push_back(file_check(f));
  return out;
}

std::vector<Result> inventory(const Environment& env) {
  std::vector<Result> out;
  auto s = gpu::probe(env.driver);
  // Driver and the runtime's entry point.
  {
    Result r{"driver", Status::info, "", "", "", nlohmann::json::object()};
    r.data = {{"source", s.source == gpu::Source::nvml ? "nvml" : s.source == gpu::Source::nvidia_smi ? "nvidia-smi" : "none"},
              {"driver_version", s.driver_version}, {"cuda", s.driver_cuda ? cuda_text(s.driver_cuda) : ""}};
    if (s.driver_version.empty()) {
      r.status = Status::warn;
      r.reason = no_driver_reason(s);
      r.fix = kInstallDriver;
    } else {
      r.reason = "NVIDIA driver " + s.driver_version + ", supports CUDA " +
                 (s.driver_cuda ? cuda_text(s.driver_cuda) : std::string("(not reported)")) + " (read through " +
                 (s.source == gpu::Source::nvml ? "NVML" : "nvidia-smi, NVML could not be opened: " + s.nvml_error) + ")";
    }
    out.push_back(r);
  }
  {
    Result r{"libcuda", Status::info, "", "", "", {{"path", s.libcuda_path}, {"cuda", s.libcuda_cuda ? cuda_text(s.libcuda_cuda) : ""}}};
    if (s.libcuda_cuda) {
      r.reason = s.libcuda_path + ": cuDriverGetVersion says CUDA " + cuda_text(s.libcuda_cuda);
    } else {
      r.status = s.driver_version.empty() ? Status::info : Status::warn;
      r.reason = "libcuda.so.1 cannot be used: " + s.libcuda_error;
      if (!s.driver_version.empty()) r.fix = "install the driver's user-mode CUDA library (libcuda.so.1) of branch " + s.driver_version.substr(0, s.driver_version.find('.'));
    }
    std::string compat = compat_note(s, env, r.data);
    if (!compat.empty()) r.reason += compat;
    out.push_back(r);
  }
  for (const auto& d : s.devices) {
    Result r{"gpu " + std::to_string(d.index), Status::info, "", "", "", device_json(d)};
    r.reason = d.name + ", " + d.uuid + ", compute capability " + (d.cc_major >= 0 ? cc_text(d.cc_major, d.cc_minor) : "?");
    if (d.memory_total)
      r.reason += ", memory " + hostcheck::format_size(*d.memory_total) + " total / " +
                  (d.memory_free ? hostcheck::format_size(*d.memory_free) : "?") + " free";
    auto link = [](int gen, int width) {
      return "gen " + (gen >= 0 ? std::to_string(gen) : "?") + " x" + (width >= 0 ? std::to_string(width) : "?");
    };
    r.reason += ", PCIe " + link(d.pcie.gen_current, d.pcie.width_current) + " now / " +
                link(d.pcie.gen_max, d.pcie.width_max) + " max";
    if (d.pcie.gen_current < d.pcie.gen_max || d.pcie.width_current < d.pcie.width_max)
      r.reason += " (idle links train down: read the link under load before blaming the slot)";
    out.push_back(r);
  }
  for (const auto& p : s.peers) {
    out.push_back({"p2p " + std::to_string(p.a) + "-" + std::to_string(p.b), Status::info,
                   "peer-to-peer read " + p.read + ", NVLink " + p.nvlink, "", "",
                   {{"a", p.a}, {"b", p.b}, {"read", p.read}, {"nvlink", p.nvlink}}});
  }
  // Build tools: looked for, not run (--cc, --nvcc, --python prove them).
  {
    auto compiler = toolchain::find_c_compiler(env.cc_env, env.path_env);
    Result r{"cc", Status::info, "", "", "", nlohmann::json::object()};
    if (compiler && compiler->path) {
      r.reason = compiler->command + " at " + compiler->path->string() +
                 (compiler->origin == "CC" ? " (from CC" : " (from PATH") + "; --cc proves it builds)";
      r.data = {{"path", compiler->path->string()}, {"origin", compiler->origin}};
    } else {
      r.status = Status::warn;
      r.reason = compiler ? "CC=" + compiler->command + " is not an executable" : "no C compiler (CC, gcc, clang)";
      r.fix = "install gcc: Triton builds launchers with it";
    }
    out.push_back(r);
  }
  {
    auto nvcc = toolchain::find_nvcc(env.cuda_home, env.path_env, env.cuda_root / "cuda");
    Result r{"nvcc", Status::info, "", "", "", nlohmann::json::object()};
    if (nvcc) {
      // The toolkit's version.json says the release without running nvcc.
      std::string release = toolkit_version(nvcc->path.parent_path().parent_path());
      r.reason = nvcc->path.string() + " (from " + nvcc->origin + ")" + (release.empty() ? "" : ", version " + release);
      r.data = {{"path", nvcc->path.string()}, {"origin", nvcc->origin}, {"version", release}};
    } else {
      r.reason = "no nvcc (CUDA_HOME, PATH, " + (env.cuda_root / "cuda").string() + "): only engines' JIT paths need it";
    }
    out.push_back(r);
  }
  {
    auto look = toolchain::look_for_python(env.path_env);
    Result r{"python", Status::info, "", "", "", nlohmann::json::object()};
    r.data = {{"interpreter", look.interpreter ? look.interpreter->string() : ""},
              {"header", look.header ? look.header->string() : ""}};
    if (!look.interpreter) {
      r.status = Status::warn;
      r.reason = "no python3 on PATH";
    } else if (!look.header) {
      r.status = Status::warn;
      r.reason = "python3 at " + look.interpreter->string() + ", but no Python.h found (--python asks it for its own include directory)";
      r.fix = "install the Python headers (apt-get install python3-dev)";
    } else {
      r.reason = "python3 at " + look.interpreter->string() + "; a Python.h at " + look.header->string() +
                 " (looked for, not asked: --python checks the interpreter's own include directory)";
    }
    out.push_back(r);
  }
  {
    auto facts = look_at_rocm(env, search_context(env));
    Result r{"rocm", Status::info, "", "", "", nlohmann::json::object()};
    r.reason = rocm_text(facts, r.data);
    out.push_back(r);
  }
  return out;
}

}  // namespace provkit::envcheck
