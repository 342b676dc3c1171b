#pragma once
// The links as they are under load: host-to-device and device-to-host copies
// on each GPU through the CUDA driver API while a second thread samples
// NVML's current PCIe generation and width (idle links train down to gen 1,
// so only a reading under traffic tells the slot), and copies between each
// pair of GPUs, direct where cuDeviceCanAccessPeer allows it, host-staged
// where it does not.
#include <optional>
#include <string>
#include <vector>

namespace provkit::host {

struct LinkReading {
  int gen = -1, width = -1;  // -1: not read
  bool known() const { return gen > 0 && width > 0; }
};

// One direction's theoretical PCIe bandwidth in GB/s (10^9 bytes): gen x
// width with the line encoding, 8b/10b for gen 1-2 and 128b/130b from gen 3;
// 0 for an unknown link.
double pcie_gb_per_s(const LinkReading& link);

struct GpuLinkTest {
  int ordinal = 0;         // CUDA's
  std::string pci_bus_id;  // "0000:01:00.0"
  std::string error;       // the copies could not run: why
  LinkReading idle, max;   // NVML before the copies; the most GPU and slot allow
  LinkReading under_load;  // the widest/fastest NVML reported while copies ran
  int samples = 0;         // NVML readings taken while copies ran
  std::string nvml_error;  // why there are no readings
  double h2d_gb_per_s = 0, d2h_gb_per_s = 0;
};

struct PeerPath {
  int a = 0, b = 0;  // CUDA ordinals
  std::string a_bus_id, b_bus_id;
  bool can_access = false;         // cuDeviceCanAccessPeer(a, b)
  std::optional<double> gb_per_s;  // a -> b, direct when can_access, else host-staged
  std::string error;
};

struct LinkTestOptions {
  std::string cuda_library = "libcuda.so.1";
  std::string nvml_library = "libnvidia-ml.so.1";
  double seconds_per_gpu = 1.0;      // split between H2D and D2H; a pair's copy gets half
  std::vector<std::string> bus_ids;  // the GPUs to test; empty: all
  std::size_t chunk_bytes = 64u << 20;
};

struct LinkTestReport {
  std::string error;  // libcuda could not be opened or initialised
  std::vector<GpuLinkTest> gpus;
  std::vector<PeerPath> peers;  // each pair of tested GPUs
};

// Never throws for a driver that is missing or refuses: errors are in the report.
LinkTestReport run_link_test(const LinkTestOptions& options);

}  // namespace provkit::host
