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
// Finds the PCI Express capability (id 0x10) in the capability list of a
// config space image (pure; only its first 256 bytes are looked at). `bdf`
// names it in `why`.
PcieFunction parse_config(std::string_view bdf, std::string_view config);
// The same walk over a function's sysfs `config` file, reading only the
// fields it needs (the kernel turns each read into config cycles, a trap to
// the hypervisor each in a VM), never past byte 256 (the extended space has
// nothing it needs). An unprivileged read stops at 64 bytes: not readable,
// `why` says so; a file that cannot be opened (or is no regular file) or
// read: not readable, `why` says why.
PcieFunction read_function(const fs::path& device_dir, std::string_view bdf);

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

// The display-class functions (class 0x03xxxx: VGA, 3D controllers) of
// `vendor` ("0x10de") under <sysfs>/bus/pci/devices, sorted: the GPUs as the
// bus shows them, before any driver is asked.
std::vector<std::string> display_bus_ids(const fs::path& sysfs_root, std::string_view vendor);

}  // namespace provkit::host
