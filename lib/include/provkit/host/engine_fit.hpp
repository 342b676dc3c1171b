#pragma once
// The fit planner (provkit::fit) on this box's GPUs: the cards the engine is
// given, as the driver reads them now, turned into fit::GpuFacts. The fit
// domain knows nothing of drivers; hf-fetch inspect --gpus local and
// envcheck --engine-args take this box's cards from here.
#include <optional>
#include <string>
#include <vector>

#include "provkit/fit/plan.hpp"
#include "provkit/host/gpu.hpp"

namespace provkit::host {

// Each card's total and free memory (a MIG instance's own when the engine is given one) and its name,
// in the engine's order. A card another process half-fills has half free. Throws Error(check_failed)
// naming a card whose memory the driver does not say.
std::vector<fit::GpuFacts> fit_gpus(const std::vector<gpu::Device>& engine_gpus);

// This box's cards as the engine sees them: the driver probed (NVML, else nvidia-smi), then
// CUDA_VISIBLE_DEVICES applied as the CUDA runtime reads it.
struct LocalGpus {
  std::vector<gpu::Device> devices;
  std::optional<std::string> cuda_visible_devices;
  std::string none_why;  // with no device: no driver (and why), the driver lists none, or the variable hides all
};
LocalGpus local_gpus(const gpu::ProbeOptions& driver, const std::optional<std::string>& cuda_visible_devices);

}  // namespace provkit::host
