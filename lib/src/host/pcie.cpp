#include "pcie.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <iterator>
#include <optional>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::host {

namespace {

constexpr std::size_t kHeaderBytes = 64;   // what an unprivileged read of `config` returns
constexpr std::size_t kConfigBytes = 256;  // the legacy config space: the capability list is all in it
constexpr unsigned kCapPcie = 0x10;        // PCI Express capability id
constexpr unsigned kDevCap2 = 0x24;        // Device Capabilities 2, from the capability

bool is_hex_digits(std::string_view s, std::size_t n) {
  return s.size() == n &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

std::string canonical_bus_id(std::string_view text) {
  auto parts = util::split(util::lower(util::trim(text)), ':');
  if (parts.size() != 3) return {};
  std::string domain = parts[0];
  while (domain.size() > 4 && domain[0] == '0') domain.erase(0, 1);  // NVML's 8 digits
  auto dot = parts[2].find('.');
  // Linux prints the domain with 4 digits at least (VMD domains have 5).
  if (!(is_hex_digits(domain, 4) || is_hex_digits(domain, 5)) || !is_hex_digits(parts[1], 2) || dot != 2 ||
      !is_hex_digits(parts[2].substr(0, 2), 2) || parts[2].size() != 4 ||
      !std::isdigit(static_cast<unsigned char>(parts[2][3])) || parts[2][3] > '7')
    return {};
  return domain + ":" + parts[1] + ":" + parts[2];
}

std::string port_type_name(PortType t) {
  switch (t) {
    case PortType::endpoint: return "endpoint";
    case PortType::legacy_endpoint: return "legacy endpoint";
    case PortType::root_port: return "root port";
    case PortType::upstream_port: return "switch upstream port";
    case PortType::downstream_port: return "switch downstream port";
    case PortType::pcie_to_pci_bridge: return "PCIe-to-PCI bridge";
    case PortType::pci_to_pcie_bridge: return "PCI-to-PCIe bridge";
    case PortType::root_complex_endpoint: return "root complex endpoint";
    case PortType::other: return "other";
  }
  return "other";
}

namespace {

// Reads `width` bytes (1, 2 or 4) at `at` of a config space, little-endian; nothing when it ends before.
using ConfigRead = std::function<std::optional<unsigned>(std::size_t at, std::size_t width)>;

unsigned little_endian(std::string_view bytes) {
  unsigned v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = v << 8 | static_cast<unsigned char>(bytes[i]);
  return v;
}

// The capability list walked a field at a time: a read of sysfs's `config` is a config cycle per field read
// (a trap to the hypervisor each, in a VM), so a function costs its five or six fields, not 64 dwords.
PcieFunction walk_config(std::string_view bdf, const ConfigRead& read) {
  PcieFunction f{.bdf = std::string(bdf)};
  if (!read(kHeaderBytes, 1)) {
    f.why = std::string(bdf) +
            "'s config space reads as 64 bytes or fewer: past the first 64 only root may read it, and the "
            "capability list is there";
    return f;
  }
  if (!(read(0x06, 2).value_or(0) & 0x10)) {  // Status: Capabilities List
    f.why = std::string(bdf) + " has no capability list";
    return f;
  }
  unsigned at = read(0x34, 1).value_or(0) & 0xfc;
  for (int hops = 0; at >= kHeaderBytes && hops < 48; ++hops) {  // 48: as many as fit in 256 bytes
    auto head = read(at, 2);                                     // capability id, next pointer
    if (!head) break;
    if ((*head & 0xff) == kCapPcie) {
      auto flags = read(at + 2, 2);
      auto cap2 = read(at + kDevCap2, 4);
      if (!flags || !cap2) break;
      static const PortType types[] = {PortType::endpoint,
                                       PortType::legacy_endpoint,
                                       PortType::other,
                                       PortType::other,
                                       PortType::root_port,
                                       PortType::upstream_port,
                                       PortType::downstream_port,
                                       PortType::pcie_to_pci_bridge,
                                       PortType::pci_to_pcie_bridge,
                                       PortType::root_complex_endpoint};
      unsigned type = (*flags >> 4) & 0xf;
      f.type = type < std::size(types) ? types[type] : PortType::other;
      f.caps = {.routing = (*cap2 >> 6 & 1) != 0,
                .completer32 = (*cap2 >> 7 & 1) != 0,
                .completer64 = (*cap2 >> 8 & 1) != 0,
                .cas128 = (*cap2 >> 9 & 1) != 0};
      f.readable = true;
      return f;
    }
    at = (*head >> 8) & 0xfc;
  }
  f.why = std::string(bdf) + " has no PCI Express capability in its config space";
  return f;
}

}  // namespace

PcieFunction parse_config(std::string_view bdf, std::string_view config) {
  config = config.substr(0, std::min(config.size(), kConfigBytes));
  return walk_config(bdf, [&](std::size_t at, std::size_t width) -> std::optional<unsigned> {
    if (at + width > config.size()) return std::nullopt;
    return little_endian(config.substr(at, width));
  });
}

PcieFunction read_function(const fs::path& device_dir, std::string_view bdf) {
  auto file = device_dir / "config";
  try {
    util::Fd fd = util::open_regular(file);  // a FIFO or device: refused, never waited on
    if (!fd) throw Error(ExitCode::check_failed, file.string() + ": " + util::describe_open_error(errno));
    return walk_config(bdf, [&](std::size_t at, std::size_t width) -> std::optional<unsigned> {
      if (at + width > kConfigBytes) return std::nullopt;  // never the extended space: nothing here is in it
      auto bytes = util::read_at(fd.get(), at, width, file.string());
      if (bytes.size() != width) return std::nullopt;
      return little_endian(bytes);
    });
  } catch (const Error& e) {
    return PcieFunction{.bdf = std::string(bdf), .why = std::string("cannot read it: ") + e.what()};
  }
}

bool AtomicsPath::readable() const {
  return error.empty() && device.readable &&
         std::all_of(bridges.begin(), bridges.end(), [](const PcieFunction& b) { return b.readable; });
}

const PcieFunction* AtomicsPath::first_blocking_bridge() const {
  for (const auto& b : bridges) {
    if (!b.readable) return nullptr;
    if (!b.caps.routing) return &b;
  }
  return nullptr;
}

AtomicsPath read_atomics_path(const fs::path& sysfs_root, const std::string& bdf) {
  AtomicsPath path{.bdf = bdf};
  std::error_code ec;
  fs::path real;
  if (canonical_bus_id(bdf) == bdf) real = fs::canonical(sysfs_root / "bus" / "pci" / "devices" / bdf, ec);
  if (real.empty() || ec) {
    path.error = "no PCI device " + bdf + " under " + (sysfs_root / "bus/pci/devices").string();
    return path;
  }
  path.device = read_function(real, bdf);
  // Every component of the real path that is a bus id is a bridge above the device.
  for (auto dir = real.parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
    auto id = dir.filename().string();
    if (canonical_bus_id(id) != id) break;  // "pci0000:00": the host bridge, past the root port
    path.bridges.push_back(read_function(dir, id));
  }
  return path;
}

std::vector<std::string> amd_gpu_bus_ids(const fs::path& sysfs_root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(sysfs_root / "class" / "drm", ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (!name.starts_with("card") || name.size() == 4 ||
        !std::all_of(name.begin() + 4, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;  // card1-DP-1 and the like are connectors
    std::string v;
    try {
      v = util::trim(util::read_file_head(it->path() / "device" / "vendor", 64));
    } catch (const Error&) {
      continue;
    }
    if (util::lower(v) != "0x1002") continue;
    std::error_code ec2;
    auto id = fs::canonical(it->path() / "device", ec2).filename().string();
    if (!ec2 && canonical_bus_id(id) == id && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> display_bus_ids(const fs::path& sysfs_root, std::string_view vendor) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(sysfs_root / "bus" / "pci" / "devices", ec), end; !ec && it != end; it.increment(ec)) {
    auto id = it->path().filename().string();
    if (canonical_bus_id(id) != id) continue;
    try {
      if (util::lower(util::trim(util::read_file_head(it->path() / "vendor", 64))) != vendor) continue;
      if (!util::lower(util::trim(util::read_file_head(it->path() / "class", 64))).starts_with("0x03")) continue;
    } catch (const Error&) {
      continue;
    }
    out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace provkit::host
