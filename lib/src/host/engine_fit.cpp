#include "provkit/host/engine_fit.hpp"

#include <algorithm>

#include "provkit/error.hpp"
#include "provkit/util/text.hpp"

namespace provkit::host {

std::vector<fit::GpuFacts> fit_gpus(const std::vector<gpu::Device>& engine_gpus) {
  std::vector<fit::GpuFacts> out;
  for (const auto& d : engine_gpus) {
    // A card of unknown memory would plan as an empty one: refused rather than guessed.
    if (!d.memory_total || !d.memory_free)
      throw Error(ExitCode::check_failed, "GPU " + std::to_string(d.index) + " (" + util::printable(d.name) +
                                              "): the driver does not say its memory, so no plan can count on it");
    out.push_back({.total = *d.memory_total,
                   .free = std::min(*d.memory_free, *d.memory_total),
                   .source = fit::GpuSource::local,
                   .name = d.name});
  }
  return out;
}

LocalGpus local_gpus(const gpu::ProbeOptions& driver, const std::optional<std::string>& cuda_visible_devices) {
  gpu::ProbeOptions o = driver;
  o.want_peers = false;  // memory is all a plan reads
  auto snapshot = gpu::probe(o);
  LocalGpus l;
  l.cuda_visible_devices = cuda_visible_devices;
  auto visibility = gpu::cuda_visibility(snapshot.devices, cuda_visible_devices);
  l.devices = gpu::engine_devices(snapshot.devices, visibility);
  if (!l.devices.empty()) return l;
  if (snapshot.driver_version.empty()) l.none_why = gpu::no_driver_reason(snapshot);
  else if (snapshot.devices.empty()) l.none_why = "driver " + snapshot.driver_version + " lists no GPU";
  else l.none_why = "CUDA_VISIBLE_DEVICES='" + visibility.text + "' leaves the engine no GPU";
  return l;
}

}  // namespace provkit::host
