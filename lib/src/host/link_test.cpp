#include "provkit/host/link_test.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "cuda_driver.hpp"
#include "shared_library.hpp"

namespace provkit::host {

namespace {

using namespace std::chrono_literals;
constexpr auto kSampleEvery = 10ms;

// NVML's link readings of one GPU, found by its PCI bus id (CUDA's ordinals
// and NVML's indices need not agree).
class LinkSampler {
 public:
  LinkSampler(const std::string& library, const std::string& bus_id) : lib_(library) {
    if (!lib_.loaded()) {
      error_ = lib_.error();
      return;
    }
    auto init = lib_.symbol<int (*)()>("nvmlInit_v2");
    auto by_bus = lib_.symbol<int (*)(const char*, void**)>("nvmlDeviceGetHandleByPciBusId_v2");
    gen_ = lib_.symbol<Read>("nvmlDeviceGetCurrPcieLinkGeneration");
    width_ = lib_.symbol<Read>("nvmlDeviceGetCurrPcieLinkWidth");
    gen_max_ = lib_.symbol<Read>("nvmlDeviceGetMaxPcieLinkGeneration");
    width_max_ = lib_.symbol<Read>("nvmlDeviceGetMaxPcieLinkWidth");
    shutdown_ = lib_.symbol<int (*)()>("nvmlShutdown");
    if (!init || !by_bus || !gen_ || !width_ || !shutdown_) {
      error_ = library + " lacks nvmlDeviceGetHandleByPciBusId_v2 or the PCIe link readings";
      return;
    }
    if (int rc = init(); rc != 0) {
      error_ = "nvmlInit_v2 failed with NVML error " + std::to_string(rc);
      return;
    }
    initialised_ = true;
    if (int rc = by_bus(bus_id.c_str(), &device_); rc != 0) {
      error_ = "NVML does not know the GPU at " + bus_id + " (error " + std::to_string(rc) + ")";
      device_ = nullptr;
    }
  }
  ~LinkSampler() {
    if (initialised_) shutdown_();
  }
  bool usable() const { return device_ != nullptr; }
  const std::string& error() const { return error_; }
  LinkReading now() const { return read(gen_, width_); }
  LinkReading max() const { return read(gen_max_, width_max_); }

 private:
  using Read = int (*)(void*, unsigned*);
  LinkReading read(Read gen, Read width) const {
    LinkReading r;
    unsigned v = 0;
    if (device_ && gen && gen(device_, &v) == 0) r.gen = static_cast<int>(v);
    if (device_ && width && width(device_, &v) == 0) r.width = static_cast<int>(v);
    return r;
  }
  SharedLibrary lib_;
  std::string error_;
  bool initialised_ = false;
  void* device_ = nullptr;
  Read gen_ = nullptr, width_ = nullptr, gen_max_ = nullptr, width_max_ = nullptr;
  int (*shutdown_)() = nullptr;
};

// Samples while `work` runs, keeping the fastest and widest readings.
template <class Work>
void sample_during(const LinkSampler& sampler, GpuLinkTest& into, Work work) {
  std::atomic<bool> done{false};
  std::thread t;
  if (sampler.usable())
    t = std::thread([&] {
      while (!done.load()) {
        auto r = sampler.now();
        if (r.known()) {
          into.under_load.gen = std::max(into.under_load.gen, r.gen);
          into.under_load.width = std::max(into.under_load.width, r.width);
          ++into.samples;
        }
        std::this_thread::sleep_for(kSampleEvery);
      }
    });
  try {
    work();
  } catch (...) {
    done = true;
    if (t.joinable()) t.join();
    throw;
  }
  done = true;
  if (t.joinable()) t.join();
}

}  // namespace

double pcie_gb_per_s(const LinkReading& link) {
  if (!link.known()) return 0;
  static const double gt_per_s[] = {0, 2.5, 5, 8, 16, 32, 64};  // per lane, by generation
  if (link.gen >= static_cast<int>(std::size(gt_per_s))) return 0;
  const double encoding = link.gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gt_per_s[link.gen] * encoding * link.width / 8.0;
}

LinkTestReport run_link_test(const LinkTestOptions& options) {
  LinkTestReport report;
  std::optional<CudaDriver> cuda;
  try {
    cuda.emplace(options.cuda_library);
    const int n = cuda->device_count();
    for (int i = 0; i < n; ++i) {
      auto id = cuda->pci_bus_id(i);
      if (options.bus_ids.empty() ||
          std::find(options.bus_ids.begin(), options.bus_ids.end(), id) != options.bus_ids.end())
        report.gpus.push_back({.ordinal = i, .pci_bus_id = id});
    }
  } catch (const Error& e) {
    report.error = e.what();
    return report;
  }
  const std::chrono::duration<double> half(options.seconds_per_gpu / 2);
  for (auto& g : report.gpus) {
    LinkSampler sampler(options.nvml_library, g.pci_bus_id);
    g.nvml_error = sampler.error();
    g.idle = sampler.now();
    g.max = sampler.max();
    try {
      sample_during(sampler, g, [&] {
        g.h2d_gb_per_s =
            cuda->time_host_copies(g.ordinal, CopyDirection::host_to_device, options.chunk_bytes, half).gb_per_s();
        g.d2h_gb_per_s =
            cuda->time_host_copies(g.ordinal, CopyDirection::device_to_host, options.chunk_bytes, half).gb_per_s();
      });
    } catch (const Error& e) {
      g.error = e.what();
    }
  }
  for (std::size_t i = 0; i < report.gpus.size(); ++i)
    for (std::size_t j = i + 1; j < report.gpus.size(); ++j) {
      const auto& a = report.gpus[i];
      const auto& b = report.gpus[j];
      PeerPath p{.a = a.ordinal, .b = b.ordinal, .a_bus_id = a.pci_bus_id, .b_bus_id = b.pci_bus_id};
      try {
        p.can_access = cuda->can_access_peer(a.ordinal, b.ordinal);
        p.gb_per_s = cuda->time_peer_copies(a.ordinal, b.ordinal, p.can_access, options.chunk_bytes, half).gb_per_s();
      } catch (const Error& e) {
        p.error = e.what();
      }
      report.peers.push_back(p);
    }
  return report;
}

}  // namespace provkit::host
