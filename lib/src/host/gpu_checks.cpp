// envcheck's NVIDIA checks: can the driver run a CUDA X.Y runtime (--cuda),
// and do the selected GPUs have what is asked (--gpu, --need, --min-cc,
// --arch-list, --vram-free). The driver is probed once per run (Probes).
#include <algorithm>

#include "detail.hpp"
#include "provkit/util/size.hpp"
#include "system.hpp"

namespace provkit::host::detail {

using gpucode::Version;

const char* const kInstallDriver =
    "install the NVIDIA driver (its libnvidia-ml.so.1 and libcuda.so.1), or point ENVCHECK_NVML_LIB / "
    "ENVCHECK_CUDA_LIB at them";

std::string cc_text(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

std::string cuda_text(int encoded) { return gpucode::from_cuda_int(encoded).str(); }

nlohmann::json device_json(const gpu::Device& d) {
  nlohmann::json j = {{"index", d.index},
                      {"uuid", d.uuid},
                      {"name", d.name},
                      {"pci_bus_id", d.pci_bus_id},
                      {"compute_capability", d.cc_major >= 0 ? cc_text(d.cc_major, d.cc_minor) : ""},
                      {"pcie",
                       {{"gen_current", d.pcie.gen_current},
                        {"gen_max", d.pcie.gen_max},
                        {"width_current", d.pcie.width_current},
                        {"width_max", d.pcie.width_max}}}};
  j["memory_total"] = d.memory_total ? nlohmann::json(*d.memory_total) : nlohmann::json(nullptr);
  j["memory_free"] = d.memory_free ? nlohmann::json(*d.memory_free) : nlohmann::json(nullptr);
  j["processes"] = seats_json(d.processes);
  return j;
}

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

namespace {

std::string gpu_label(const gpu::Device& d) {
  return "GPU " + std::to_string(d.index) + " (" + (d.name.empty() ? "unnamed" : d.name) + ", sm_" +
         std::to_string(d.cc_major) + std::to_string(d.cc_minor) + ")";
}

// The GPUs the checks apply to; unknown selectors become failures.
std::vector<gpu::Device> selected_gpus(const Request& req, const gpu::Snapshot& s, Probes& probes,
                                       std::vector<Result>& out) {
  auto visible = probes.engine_gpus();
  if (req.gpus.empty()) return visible;
  std::vector<gpu::Device> picked;
  for (const auto& sel : req.gpus) {
    if (const auto* hidden = gpu::select_device(s.devices, sel); hidden && !gpu::select_device(visible, sel)) {
      out.push_back({.name = "gpu " + sel,
                     .status = Status::fail,
                     .rule = Rule::gpu_selector,
                     .reason = gpu_label(*hidden) + " is not visible to the engine (CUDA_VISIBLE_DEVICES='" +
                               probes.visibility().text + "')",
                     .fix = "add it to CUDA_VISIBLE_DEVICES, or check the GPUs the engine is given",
                     .data = {{"selector", sel}, {"cuda_visible_devices", probes.visibility().text}}});
      continue;
    }
    if (const auto* d = gpu::select_device(visible, sel)) {
      if (std::none_of(picked.begin(), picked.end(), [&](const gpu::Device& p) { return p.index == d->index; }))
        picked.push_back(*d);
      continue;
    }
    std::string have;
    for (const auto& d : s.devices) have += (have.empty() ? "" : ", ") + std::to_string(d.index) + " " + d.uuid;
    out.push_back(
        {.name = "gpu " + sel,
         .status = Status::fail,
         .rule = Rule::gpu_selector,
         .reason = "no GPU matches '" + sel + "' (index or UUID); the driver lists " + (have.empty() ? "none" : have),
         .fix = "name GPUs by UUID (indices can change across boots): see `envcheck` for the list",
         .data = {{"selector", sel}}});
  }
  return picked;
}

Result need_check(const std::string& need, const gpu::Device& d, const std::string& idx) {
  const Version cc{d.cc_major, d.cc_minor};
  const auto min = *gpucode::capability_minimum(need);
  const bool fp8 = need == "fp8";
  const std::string what = fp8 ? "FP8" : "NVFP4";
  Result r{.name = "need " + need + idx,
           .status = Status::pass,
           .rule = fp8 ? Rule::native_fp8 : Rule::native_nvfp4,
           .threshold = min.str(),
           .data = device_json(d)};
  if (cc >= min) {
    r.reason = gpu_label(d) + " has native " + what + " arithmetic (compute capability " + cc.str() +
               " >= " + min.str() + ")";
    return r;
  }
  r.status = Status::fail;
  r.reason = gpu_label(d) + " has no native " + what + " arithmetic (compute capability " + cc.str() + " < " +
             min.str() + "); engines fall back to weight-only kernels (" +
             (fp8 ? "FP8 weights, bf16 arithmetic: slower" : "FP4 weights, higher-precision arithmetic") + ")";
  r.fix = fp8 ? "run a bf16 or weight-only quantised checkpoint on this GPU, or use a GPU of compute capability 8.9 or "
                "newer (Ada, Hopper, Blackwell)"
              : "use a Blackwell GPU (compute capability 10.0 or newer) for NVFP4, or an FP8/bf16 checkpoint here";
  return r;
}

Result min_cc_check(const Version& min_cc, const gpu::Device& d, const std::string& idx) {
  const Version cc{d.cc_major, d.cc_minor};
  const bool ok = cc >= min_cc;
  return {.name = "min-cc " + min_cc.str() + idx,
          .status = ok ? Status::pass : Status::fail,
          .rule = Rule::min_compute_capability,
          .threshold = min_cc.str(),
          .reason = gpu_label(d) + " has compute capability " + cc.str() + (ok ? " >= " : " < ") + min_cc.str(),
          .fix = ok ? "" : "use a GPU of compute capability " + min_cc.str() + " or newer",
          .data = device_json(d)};
}

Result arch_list_check(const std::vector<gpucode::ArchTarget>& arch_list, const gpu::Device& d,
                       const std::string& idx) {
  const Version cc{d.cc_major, d.cc_minor};
  std::string list;
  for (const auto& t : arch_list) list += (list.empty() ? "" : ",") + t.text;
  Result r{.name = "arch-list" + idx, .status = Status::pass, .rule = Rule::arch_list_match, .data = device_json(d)};
  r.data["arch_list"] = list;
  if (auto match = gpucode::best_match(arch_list, cc)) {
    r.reason = gpu_label(d) + " runs " + match->text +
               (match->ptx ? " (PTX, JIT-compiled by the driver at first use)" : " (cubin)") + " from " + list;
    r.data["match"] = match->text;
    return r;
  }
  r.status = Status::fail;
  r.reason = gpu_label(d) + " has no kernel in " + list + " (no cubin sm_" + std::to_string(cc.major) +
             "x with x <= " + std::to_string(cc.minor) + ", no PTX for " + cc.str() +
             " or older): expect \"no kernel image is available for execution on the device\"";
  r.fix = "use a build compiled for sm_" + std::to_string(cc.major) + std::to_string(cc.minor) +
          " (e.g. TORCH_CUDA_ARCH_LIST including " + cc.str() + "), or one that carries PTX for an older architecture";
  return r;
}

Result vram_free_check(const Request& req, const gpu::Device& d, const std::string& idx) {
  Result r{.name = "vram-free" + idx,
           .status = Status::pass,
           .rule = Rule::vram_free,
           .threshold = req.vram_free_text,
           .data = device_json(d)};
  if (!d.memory_free) {
    r.status = Status::fail;
    r.reason = gpu_label(d) + ": the driver did not report its free memory";
  } else if (*d.memory_free >= *req.vram_free) {
    r.reason = gpu_label(d) + " has " + util::format_size(*d.memory_free) +
               " free >= " + util::format_size(*req.vram_free);
  } else {
    r.status = Status::fail;
    r.reason = gpu_label(d) + " has " + util::format_size(*d.memory_free) + " free < " +
               util::format_size(*req.vram_free) + " needed" + seats_text(d.processes);
    r.fix = d.processes.empty()
                ? "stop what holds the GPU's memory (nvidia-smi --query-compute-apps=pid,used_memory --format=csv) or "
                  "pick another GPU"
                : "stop what holds the GPU's memory (" + seats_fix(d.processes) + ") or pick another GPU";
  }
  return r;
}

}  // namespace

Result cuda_check(const Request& req, Probes& probes) {
  const auto& s = probes.driver();
  Result r{.name = "cuda " + req.cuda->str(),
           .data = {{"asked", req.cuda->str()},
                    {"driver_version", s.driver_version},
                    {"driver_cuda", s.driver_cuda ? cuda_text(s.driver_cuda) : ""},
                    {"libcuda_cuda", s.libcuda_cuda ? cuda_text(s.libcuda_cuda) : ""},
                    {"libcuda_path", s.libcuda_path}}};
  if (s.driver_version.empty() && s.libcuda_cuda == 0) {
    auto min = cudacompat::minimum_driver_for(*req.cuda);
    r.status = Status::fail;
    r.rule = Rule::no_driver;
    r.reason = no_driver_reason(s) + "; " + s.libcuda_error;
    r.fix = std::string("install the NVIDIA driver") + (min ? std::string(" ") + min->driver + " or newer" : "") +
            " (CUDA " + req.cuda->str() + ")";
    return r;
  }
  if (s.libcuda_cuda == 0) {
    // NVML answers but the runtime's entry point does not load: the engine cannot start.
    r.status = Status::fail;
    r.rule = Rule::libcuda_missing;
    r.reason = "driver " + s.driver_version + " (CUDA " + cuda_text(s.driver_cuda) +
               ") is there, but libcuda.so.1 cannot be used: " + s.libcuda_error +
               "; the CUDA runtime of the engine will not find the driver";
    r.fix =
        "install the driver's user-mode CUDA library (libcuda.so.1, e.g. the libnvidia-compute package of the "
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
  r.hint = v.hint;
  if (s.driver_cuda && s.driver_cuda != s.libcuda_cuda) {
    r.reason += "; the kernel driver (NVML) reports CUDA " + cuda_text(s.driver_cuda) + " but libcuda reports " +
                cuda_text(s.libcuda_cuda);
    // The driver is new enough; the libcuda the engine loads is not this driver's: say that, not "install the driver".
    if (v.status != Status::pass && gpucode::from_cuda_int(s.driver_cuda) >= *req.cuda &&
        !gpu::is_compat_path(s.libcuda_path))
      r.fix = "the installed driver " + s.driver_version + " supports CUDA " + cuda_text(s.driver_cuda) +
              ", but the libcuda.so.1 the engine loads (" +
              (s.libcuda_path.empty() ? std::string("the loader's") : s.libcuda_path) + ") is another driver's (CUDA " +
              cuda_text(s.libcuda_cuda) + "): install the user-mode driver of " + s.driver_version +
              " (libnvidia-compute of the same version) or remove the stale libcuda from the loader path";
  }
  r.reason += compat_note(s, probes.env(), r.data);
  return r;
}

void gpu_checks(const Request& req, Probes& probes, std::vector<Result>& out) {
  bool wanted = !req.needs.empty() || req.min_cc || !req.arch_list.empty() || req.vram_free || !req.gpus.empty();
  if (!wanted) return;
  const auto& s = probes.driver();
  // No NVIDIA GPU but AMD ones: --gpu selects among them and --vram-free is read from amdgpu (the other
  // asks are NVIDIA's).
  if ((s.driver_version.empty() || s.devices.empty()) && !probes.rocm().gpus.empty() && req.needs.empty() &&
      !req.min_cc && req.arch_list.empty())
    return amd_gpu_checks(req, probes, out);
  if (s.driver_version.empty() || s.devices.empty()) {
    const bool amd = !probes.rocm().gpus.empty();
    out.push_back(
        {.name = "gpu",
         .status = Status::fail,
         .rule = Rule::no_gpu,
         .reason = s.driver_version.empty() ? no_driver_reason(s) : "driver " + s.driver_version + " lists no GPU",
         .fix = !amd ? kInstallDriver
                     // An AMD box asked an NVIDIA question: the answer is not an NVIDIA driver.
                     : "native capabilities, a minimum compute capability and an architecture list ask about NVIDIA "
                       "GPUs, and the GPUs here are AMD's: ask for a gfx target (the gpu amdN rows name each one's), "
                       "the GPUs to check and their free memory",
         .hint = amd ? Hint::amd_settings : Hint::none});
    return;
  }
  const auto& vis = probes.visibility();
  if (auto unknown = unknown_mig_row(vis)) out.push_back(*unknown);
  if (vis.restricted && vis.indices.empty()) {
    std::string ignored;
    for (const auto& e : vis.ignored) ignored += (ignored.empty() ? "" : ", ") + e;
    out.push_back(
        {.name = "gpu",
         .status = Status::fail,
         .rule = Rule::no_gpu,
         .reason = "CUDA_VISIBLE_DEVICES='" + vis.text + "' leaves the engine no GPU" +
                   (ignored.empty() ? "" : " (no GPU matches " + ignored + ")"),
         .fix = "set CUDA_VISIBLE_DEVICES to the indices or UUIDs of the engine's GPUs (see `envcheck`), or unset it",
         .data = {{"cuda_visible_devices", vis.text}, {"ignored", vis.ignored}}});
    return;
  }
  auto gpus = selected_gpus(req, s, probes, out);
  const bool only_selection = req.needs.empty() && !req.min_cc && req.arch_list.empty() && !req.vram_free;
  for (const auto& d : gpus) {
    const std::string idx = " gpu" + std::to_string(d.index);
    const auto first = out.size();
    if (only_selection) {
      out.push_back({.name = "gpu " + std::to_string(d.index),
                     .status = Status::pass,
                     .rule = Rule::gpu_selector,
                     .reason = gpu_label(d) + ", " + d.uuid + " is present",
                     .data = device_json(d)});
    } else {
      for (const auto& need : req.needs) out.push_back(need_check(need, d, idx));
      if (req.min_cc) out.push_back(min_cc_check(*req.min_cc, d, idx));
      if (!req.arch_list.empty()) out.push_back(arch_list_check(req.arch_list, d, idx));
      if (req.vram_free) out.push_back(vram_free_check(req, d, idx));
    }
    // Through MIG the engine's device is an instance (its memory is what --vram-free judged): say which.
    if (auto migs = vis.migs_of(d.index); !migs.empty())
      for (auto k = first; k < out.size(); ++k) {
        out[k].reason += migs.size() > 1 ? "; through MIG instances " : "; through MIG instance ";
        for (std::size_t j = 0; j < migs.size(); ++j) {
          out[k].reason += (j ? ", " : "") + mig_text(*migs[j]);
          out[k].data["visible_migs"].push_back(mig_json(*migs[j]));
        }
      }
  }
}

}  // namespace provkit::host::detail
