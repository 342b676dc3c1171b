#include "provkit/gpucode/amd_target.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <vector>

namespace provkit::gpucode {

namespace {

// LLVM's generic targets (AMDGPUUsage): the processors each one loads on.
const std::map<std::string, std::vector<std::string>>& generic_targets() {
  static const std::map<std::string, std::vector<std::string>> t = {
      {"gfx9-generic", {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
      {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}},
      {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
      {"gfx10-3-generic", {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"}},
      {"gfx11-generic", {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
      {"gfx12-generic", {"gfx1200", "gfx1201"}},
  };
  return t;
}

bool one_of(const std::string& gfx, std::initializer_list<const char*> list) {
  return std::any_of(list.begin(), list.end(), [&](const char* g) { return gfx == g; });
}

}  // namespace

bool code_object_runs_on(const std::string& target_id, const std::string& gfx) {
  const auto processor = target_id.substr(0, target_id.find(':'));
  if (processor == gfx) return true;
  auto g = generic_targets().find(processor);
  return g != generic_targets().end() && std::find(g->second.begin(), g->second.end(), gfx) != g->second.end();
}

bool has_xnack(const std::string& gfx) {
  return one_of(gfx, {"gfx801", "gfx810", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a",
                      "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012", "gfx1013"});
}

bool has_sramecc(const std::string& gfx) {
  return one_of(gfx, {"gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"});
}

TargetMatch match_target(const std::string& target_id, const AmdProcessor& gpu) {
  if (!code_object_runs_on(target_id, gpu.gfx_target))
    return {TargetMatch::Verdict::wrong_processor, "built for another processor than " + gpu.gfx_target};
  // The features after the processor: ":sramecc+", ":xnack-"; one left out runs in either mode.
  std::size_t at = target_id.find(':');
  while (at != std::string::npos) {
    auto next = target_id.find(':', at + 1);
    auto feature = target_id.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    at = next;
    if (feature.size() < 2 || (feature.back() != '+' && feature.back() != '-')) continue;
    const bool on = feature.back() == '+';
    const auto name = feature.substr(0, feature.size() - 1);
    const bool has = name == "xnack" ? has_xnack(gpu.gfx_target) : name == "sramecc" && has_sramecc(gpu.gfx_target);
    const auto& mode = name == "xnack" ? gpu.xnack : gpu.sramecc;
    std::string why = feature;
    if (!has) {
      why += " code, and " + gpu.gfx_target;
      why += " has no " + name;
      why += " mode";
      return {TargetMatch::Verdict::wrong_mode, why};
    }
    if (!mode) {
      why += " code: the GPU's " + name;
      why += name == "xnack" ? " mode cannot be told here (amdgpu's noretry parameter is unreadable and HSA_XNACK is "
                               "unset)"
                             : " mode cannot be told here (KFD gives no capability)";
      return {TargetMatch::Verdict::unknown_mode, why};
    }
    if (*mode != on) {
      why += " code on a GPU running " + name;
      why += *mode ? "+" : "-";
      why += name != "xnack" ? " (SRAM ECC is a board setting)"
             : on            ? " (HSA_XNACK=1 in the engine's environment, where the GPU allows it, or "
                               "amdgpu's noretry=0, turns it on)"
                             : " (HSA_XNACK=0 in the engine's environment turns it off)";
      return {TargetMatch::Verdict::wrong_mode, why};
    }
  }
  return {};
}

}  // namespace provkit::gpucode
