// envcheck's AMD check (--rocm): the ROCm runtime libraries the loader would
// find, and the GPUs the KFD topology lists. The inventory shows the same facts.
#include <algorithm>

#include "detail.hpp"
#include "provkit/kernels/listing.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/strings.hpp"

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
    g += (g.empty() ? "" : ", ") + std::string("node ") + std::to_string(gpu.node) + " " + gpu.target_id() +
         (gpu.product_name.empty() ? "" : " " + gpu.product_name);
    if (!gpu.processes.empty()) g += " (" + seats_text(gpu.processes).substr(2) + ")";
    auto j = amd_json(gpu);
    j["gfx_target_version"] = gpu.gfx_target_version;
    data["gpus"].push_back(j);
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

std::string amd_label(const rocm::AmdGpu& g) {
  return "AMD GPU node " + std::to_string(g.node) + " (" + (g.product_name.empty() ? "" : g.product_name + ", ") +
         g.target_id() + ")";
}

nlohmann::json amd_json(const rocm::AmdGpu& g) {
  auto opt = [](const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  auto mode = [](const std::optional<bool>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"node", g.node},
          {"uuid", g.uuid()},
          {"name", g.name},
          {"product_name", g.product_name},
          {"gfx_target", g.gfx_target},
          {"target_id", g.target_id()},
          {"xnack", mode(g.xnack)},
          {"sramecc", mode(g.sramecc)},
          {"pci_bus_id", g.pci_bus_id},
          {"device_id", g.device_id},
          {"vram_total", opt(g.vram_total)},
          {"vram_free", g.vram_total && g.vram_used && *g.vram_used <= *g.vram_total
                            ? nlohmann::json(*g.vram_total - *g.vram_used)
                            : nlohmann::json(nullptr)},
          {"processes", seats_json(g.processes)}};
}

std::string amd_visibility_text(const Environment& env) {
  std::string t;
  if (env.rocr_visible_devices) t += "ROCR_VISIBLE_DEVICES='" + *env.rocr_visible_devices + "'";
  if (env.hip_visible_devices)
    t += (t.empty() ? "" : ", ") + ("HIP_VISIBLE_DEVICES='" + *env.hip_visible_devices + "'");
  return t;
}

namespace {

bool same_gpu(const rocm::AmdGpu& a, const rocm::AmdGpu& b) { return a.node == b.node; }

}  // namespace

std::vector<rocm::AmdGpu> selected_amd_gpus(const Request& req, Probes& probes, std::vector<Result>* out) {
  auto visible = probes.engine_amd_gpus();
  if (req.gpus.empty()) return visible;
  const auto& all = probes.rocm().gpus;
  std::vector<rocm::AmdGpu> picked;
  for (const auto& sel : req.gpus) {
    const auto* g = rocm::select_amd_gpu(all, sel);
    if (!g) {
      std::string have;
      for (std::size_t i = 0; i < all.size(); ++i)
        have += (have.empty() ? "" : ", ") + std::to_string(i) + " node " + std::to_string(all[i].node) + " " +
                all[i].target_id() + (all[i].uuid().empty() ? "" : " " + all[i].uuid());
      if (out)
        out->push_back({.name = "gpu " + sel,
                        .status = Status::fail,
                        .rule = Rule::gpu_selector,
                        .reason = "no AMD GPU matches '" + sel + "' (index or UUID); the KFD topology lists " +
                                  (have.empty() ? "none" : have),
                        .fix = "name AMD GPUs by UUID (rocminfo's Uuid: GPU-...) or by their index among the KFD GPUs",
                        .data = {{"selector", sel}}});
      continue;
    }
    if (std::none_of(visible.begin(), visible.end(), [&](const auto& v) { return same_gpu(v, *g); })) {
      if (out)
        out->push_back(
            {.name = "gpu " + sel,
             .status = Status::fail,
             .rule = Rule::gpu_selector,
             .reason = amd_label(*g) + " is not visible to the engine (" + amd_visibility_text(probes.env()) + ")",
             .fix = "add it to ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, or check the GPUs the engine is "
                    "given",
             .data = {{"selector", sel}, {"node", g->node}}});
      continue;
    }
    if (std::none_of(picked.begin(), picked.end(), [&](const auto& p) { return same_gpu(p, *g); }))
      picked.push_back(*g);
  }
  return picked;
}

void amd_gpu_checks(const Request& req, Probes& probes, std::vector<Result>& out) {
  auto gpus = selected_amd_gpus(req, probes, &out);
  if (req.vram_free) return amd_vram_checks(req, gpus, out);
  for (const auto& g : gpus) {
    std::string memory;
    if (g.vram_total)
      memory = ", VRAM " + util::format_size(*g.vram_total) + " total" +
               (g.vram_used && *g.vram_used <= *g.vram_total
                    ? " / " + util::format_size(*g.vram_total - *g.vram_used) + " free"
                    : std::string());
    out.push_back({.name = "gpu amd" + std::to_string(g.node),
                   .status = Status::pass,
                   .rule = Rule::gpu_selector,
                   .reason = amd_label(g) + (g.uuid().empty() ? "" : ", " + g.uuid()) + memory + " is present" +
                             seats_text(g.processes),
                   .data = amd_json(g)});
  }
}

Result gfx_check(const std::string& target, const Request& req, Probes& probes) {
  // Every AMD GPU the engine sees (and --gpu selects) must load code built for `target`: its processor,
  // or a generic target covering it, and the xnack/sramecc modes the target sets. `target` may be the set
  // one build carries ("gfx1151,gfx1201", a mixed box): each GPU must load one of them, as the runtime
  // picks the code object for each GPU from one fat binary.
  const std::vector<std::string> targets = util::split(target, ',');
  const auto gpus = selected_amd_gpus(req, probes, nullptr);
  Result r{.name = "gfx " + target,
           .status = Status::pass,
           .rule = Rule::gfx_target,
           .threshold = target,
           .data = {{"target", target}, {"gpus", nlohmann::json::array()}}};
  std::string good, bad, unsure, why, first_bad;
  for (const auto& g : gpus) {
    using V = gpucode::TargetMatch::Verdict;
    // The target of the set that loads here, else the most telling miss (a mode that cannot be told over
    // another processor's code).
    gpucode::TargetMatch m = gpucode::match_target(targets.front(), g.processor());
    std::string loads_from = m.verdict == V::loads ? targets.front() : "";
    for (std::size_t t = 1; t < targets.size() && loads_from.empty(); ++t) {
      auto other = gpucode::match_target(targets[t], g.processor());
      if (other.verdict == V::loads) loads_from = targets[t];
      if (other.verdict == V::loads || (m.verdict == V::wrong_processor && other.verdict != V::wrong_processor))
        m = std::move(other);
    }
    const bool ok = m.verdict == V::loads;
    r.data["gpus"].push_back({{"node", g.node},
                              {"gfx_target", g.gfx_target},
                              {"target_id", g.target_id()},
                              {"runs", ok},
                              {"loads", ok ? nlohmann::json(loads_from) : nlohmann::json(nullptr)},
                              {"why", m.why}});
    auto& list = ok ? good : m.verdict == V::unknown_mode ? unsure : bad;
    list += (list.empty() ? "" : ", ") + std::string("node ") + std::to_string(g.node) + " " + g.target_id();
    if (ok && targets.size() > 1) list += " (from " + loads_from + ")";
    if (!ok && m.verdict != V::wrong_processor) list += " (" + m.why + ")";
    if (!ok && m.verdict != V::unknown_mode && first_bad.empty()) first_bad = g.target_id();
  }
  if (gpus.empty()) {
    r.status = Status::fail;
    r.reason = probes.rocm().gpus.empty()
                   ? "no AMD GPU in the KFD topology (" +
                         (probes.env().sysfs_root / "class/kfd/kfd/topology/nodes").string() + ")"
                   : "no AMD GPU is left to the engine (" + amd_visibility_text(probes.env()) + ")";
    r.fix = "load the amdgpu kernel driver (modprobe amdgpu) and check /dev/kfd access";
  } else if (!bad.empty()) {
    r.status = Status::fail;
    r.reason = "code built for " + target + " does not load on " + bad +
               (good.empty() ? "" : " (it does on " + good + ")") +
               (unsure.empty() ? "" : "; cannot tell on " + unsure);
    r.fix = "use a build of the engine that also carries code for " + first_bad +
            " (hipcc --offload-arch=" + first_bad + "), or run it on GPUs of " + target;
  } else if (!unsure.empty()) {
    r.status = Status::warn;
    r.reason = "code built for " + target + " loads on " + (good.empty() ? "no GPU for sure" : good) +
               "; cannot tell on " + unsure;
    r.fix =
        "set HSA_XNACK in the engine's environment (1 or 0) to fix the mode, or use a build without the feature "
        "setting (gfx90a, not gfx90a:xnack-)";
  } else {
    r.reason = "code built for " + target + " loads on every AMD GPU: " + good;
  }
  return r;
}

void amd_vram_checks(const Request& req, const std::vector<rocm::AmdGpu>& gpus, std::vector<Result>& out) {
  for (const auto& g : gpus) {
    const std::string label = amd_label(g);
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
    r.data["processes"] = seats_json(g.processes);
    if (free >= *req.vram_free) {
      r.status = Status::pass;
      r.reason = label + " has " + util::format_size(free) + " free >= " + util::format_size(*req.vram_free);
    } else {
      r.reason = label + " has " + util::format_size(free) + " free < " + util::format_size(*req.vram_free) +
                 " needed" + seats_text(g.processes);
      r.fix = g.processes.empty() ? "stop what holds the GPU's memory (amd-smi process, rocm-smi --showpids) or pick "
                                    "another GPU (HIP_VISIBLE_DEVICES)"
                                  : "stop what holds the GPU's memory (" + seats_fix(g.processes) +
                                        ") or pick another GPU (HIP_VISIBLE_DEVICES)";
    }
    out.push_back(r);
  }
}

}  // namespace provkit::host::detail
