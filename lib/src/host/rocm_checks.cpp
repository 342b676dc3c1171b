// envcheck's AMD check (--rocm): the ROCm runtime libraries the loader would
// find, and the GPUs the KFD topology lists. The inventory shows the same facts.
#include <algorithm>

#include "detail.hpp"

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
    data["gpus"].push_back({{"node", gpu.node}, {"gfx_target", gpu.gfx_target}, {"gfx_target_version", gpu.gfx_target_version},
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

}  // namespace provkit::host::detail
