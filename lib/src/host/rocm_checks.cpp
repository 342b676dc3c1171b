// envcheck's AMD check (--rocm): the ROCm runtime libraries the loader would
// find, and the GPUs the KFD topology lists. The inventory shows the same facts.
#include <algorithm>

#include "detail.hpp"
#include "provkit/host/kernels.hpp"
#include "provkit/util/size.hpp"

namespace provkit::host::detail {

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
    data["gpus"].push_back({{"node", gpu.node},
                            {"gfx_target", gpu.gfx_target},
                            {"gfx_target_version", gpu.gfx_target_version},
                            {"device_id", gpu.device_id}});
  }
  t += "; " + (f.gpus.empty() ? std::string("no AMD GPU in the KFD topology")
                              : std::to_string(f.gpus.size()) + " AMD GPU" + (f.gpus.size() > 1 ? "s" : "") + ": " + g);
  return t;
}

Result rocm_check(Probes& probes) {
  const auto& facts = probes.rocm();
  Result r{.name = "rocm", .status = Status::pass, .rule = Rule::rocm_present};
  r.reason = rocm_text(facts, r.data);
  bool libs_ok = std::all_of(facts.libs.begin(), facts.libs.end(), [](const auto& l) { return l.path.has_value(); });
  if (!libs_ok || facts.gpus.empty()) {
    r.status = Status::fail;
    r.fix = !libs_ok ? "install the ROCm runtime (hip-runtime-amd, hsa-rocr) or set ROCM_PATH"
                     : "load the amdgpu kernel driver (modprobe amdgpu) and check /dev/kfd access";
  }
  return r;
}

Result gfx_check(const std::string& target, Probes& probes) {
  // Every AMD GPU of KFD must load code built for `target` (its processor, or a generic target covering it).
  const auto gpus = probes.engine_amd_gpus();
  Result r{.name = "gfx " + target,
           .status = Status::pass,
           .rule = Rule::gfx_target,
           .threshold = target,
           .data = {{"target", target}, {"gpus", nlohmann::json::array()}}};
  std::string good, bad;
  for (const auto& g : gpus) {
    const bool ok = kernels::code_object_runs_on(target, g.gfx_target);
    r.data["gpus"].push_back({{"node", g.node}, {"gfx_target", g.gfx_target}, {"runs", ok}});
    (ok ? good : bad) += (((ok ? good : bad).empty()) ? "" : ", ") + std::string("node ") + std::to_string(g.node) +
                         " " + g.gfx_target;
  }
  if (gpus.empty()) {
    r.status = Status::fail;
    r.reason = "no AMD GPU in the KFD topology (" +
               (probes.env().sysfs_root / "class/kfd/kfd/topology/nodes").string() + ")";
    r.fix = "load the amdgpu kernel driver (modprobe amdgpu) and check /dev/kfd access";
  } else if (!bad.empty()) {
    r.status = Status::fail;
    r.reason = "code built for " + target + " does not load on " + bad +
               (good.empty() ? "" : " (it does on " + good + ")");
    r.fix = "use a build of the engine for the GPUs' target (hipcc --offload-arch=" + gpus.front().gfx_target +
            "), or run it on GPUs of " + target;
  } else {
    r.reason = "code built for " + target + " loads on every AMD GPU: " + good;
  }
  return r;
}

void amd_vram_checks(const Request& req, Probes& probes, std::vector<Result>& out) {
  for (const auto& g : probes.engine_amd_gpus()) {
    const std::string label = "AMD GPU node " + std::to_string(g.node) + " (" + g.gfx_target + ")";
    Result r{.name = "vram-free amd" + std::to_string(g.node),
             .status = Status::fail,
             .rule = Rule::vram_free,
             .threshold = req.vram_free_text,
             .data = {{"node", g.node}, {"gfx_target", g.gfx_target}, {"need", *req.vram_free}}};
    if (!g.vram_total || !g.vram_used || *g.vram_used > *g.vram_total) {
      r.reason = label + ": amdgpu's mem_info_vram_total/used cannot be read (render node " +
                 std::to_string(g.drm_render_minor) + ")";
      r.fix = "check that the amdgpu driver is loaded and /sys/class/drm/renderD*/device is readable";
      out.push_back(r);
      continue;
    }
    const auto free = *g.vram_total - *g.vram_used;
    r.data["free"] = free;
    r.data["total"] = *g.vram_total;
    if (free >= *req.vram_free) {
      r.status = Status::pass;
      r.reason = label + " has " + util::format_size(free) + " free >= " + util::format_size(*req.vram_free);
    } else {
      r.reason = label + " has " + util::format_size(free) + " free < " + util::format_size(*req.vram_free) + " needed";
      r.fix =
          "stop what holds the GPU's memory (amd-smi process, rocm-smi --showpids) or pick another GPU "
          "(HIP_VISIBLE_DEVICES)";
    }
    out.push_back(r);
  }
}

}  // namespace provkit::host::detail
