#pragma once
// PCIe AtomicOps along a GPU's path to its root port, read from sysfs: the
// kernel's device tree (/sys/bus/pci/devices/<bdf> is a link into
// /sys/devices/pci<domain>:<bus>/<root port>/.../<device>) and each device's
// `config` file. Past its first 64 bytes, config space is readable by root
// only: the capability list lies there, so an unprivileged read says so
// instead of guessing.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::host {

namespace fs = std::filesystem;

// "00000000:01:00.0" (NVML), "0000:01:00.0" (cuDeviceGetPCIBusId), any case
// -> "0000:01:00.0" (sysfs's spelling); "" when it is not a bus id.
std::string canonical_bus_id(std::string_view text);

// The bits of Device Capabilities 2 (PCI Express capability + 0x24).
struct AtomicCaps {
  bool routing = false;      // bit 6: AtomicOp Routing Supported (switch and root ports)
  bool completer32 = false;  // bit 7
  bool completer64 = false;  // bit 8
  bool cas128 = false;       // bit 9
};

enum class PortType {
  endpoint,
  legacy_endpoint,
  root_port,
  upstream_port,
  downstream_port,
  pcie_to_pci_bridge,
  pci_to_pcie_bridge,
  root_complex_endpoint,
  other
};
std::string port_type_name(PortType t);  // "root port", "switch upstream port", ...

// What one device's config space says; `readable` false with `why` when it
// could not be read far enough (too short: not root; no PCIe capability).
struct PcieFunction {
  std::string bdf;
  bool readable = false;
  std::string why;
  PortType type = PortType::other;
  AtomicCaps caps;
};
// Pure: finds the PCI Express capability (id 0x10) in the capability list of
// a config space image. `bdf` names it in `why`.
PcieFunction parse_config(std::string_view bdf, std::string_view config);
// The part of a function's sysfs `config` file parse_config reads: its first
// 256 bytes (the header and the capability list, where the PCI Express
// capability is), or fewer when that is all the file gives (64 to a user
// that is not root); throws provkit::Error when it cannot be read or is no regular file. Never the extended
// space past 256: the kernel reads it from the device a dword at a time
// (a trap to the hypervisor each, in a VM), and nothing here is in it.
std::string read_config_space(const fs::path& device_dir);

// The device and every bridge above it, nearest first, up to the root port.
struct AtomicsPath {
  std::string bdf;    // the device asked about
  std::string error;  // set when the device is not in sysfs
  PcieFunction device;
  std::vector<PcieFunction> bridges;  // nearest first; the last is the root port
  bool readable() const;              // the device and every bridge were read
  // The first bridge (from the device upwards) that does not route AtomicOps; nullptr when all do or some were
  // unreadable.
  const PcieFunction* first_blocking_bridge() const;
};
AtomicsPath read_atomics_path(const fs::path& sysfs_root, const std::string& bdf);

// AMD GPUs as the DRM devices show them: the bus ids of <sysfs>/class/drm/cardN
// whose device's vendor is 0x1002, sorted.
std::vector<std::string> amd_gpu_bus_ids(const fs::path& sysfs_root);

}  // namespace provkit::host
