#pragma once
// RoCE GID tables from sysfs (<sysfs>/class/infiniband/<dev>/ports/<p>/gids/<i>,
// gid_attrs/types/<i>, gid_attrs/ndevs/<i>) and the index NCCL needs in
// NCCL_IB_GID_INDEX: the RoCE v2 entry of this node's own IPv4 address. A
// removed address leaves a hole, so the index differs per node and per boot.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace provkit::host {

namespace fs = std::filesystem;

struct GidEntry {
  int index = 0;
  std::string gid;                          // "::ffff:10.0.0.5", "fe80::1e34:daff:fe5a:1b2c" (inet_ntop's spelling)
  std::string type;                         // "RoCE v2", "IB/RoCE v1"; "" when the kernel gives none
  std::string netdev;                       // "eth0"; "" when none
  std::optional<std::string> ipv4() const;  // "10.0.0.5" for an IPv4-mapped GID
  bool roce_v2() const { return type == "RoCE v2"; }
};

struct RdmaPort {
  std::string device;  // "mlx5_0"
  int port = 1;
  std::string link_layer;  // "Ethernet", "InfiniBand"; "" unknown
  std::string state;       // the port's state file, "4: ACTIVE", "1: DOWN"; "" when absent
  bool active() const { return state.empty() || state.find("ACTIVE") != std::string::npos; }
  std::vector<GidEntry> gids;  // occupied entries, by index
  std::vector<int> holes;      // empty (all-zero) or unreadable slots below the last occupied one
};

// Every port of every device (or of `only_device` when not empty), sorted. An
// absent /sys/class/infiniband gives an empty list. At most 1024 GIDs a port.
std::vector<RdmaPort> read_rdma_ports(const fs::path& sysfs_root, const std::string& only_device = "");

// The lowest index of a RoCE v2 entry whose IPv4-mapped address is one of
// `node_ipv4` (dotted quads); none when there is no such entry. Link-local
// IPv6 entries are never chosen: they regenerate.
std::optional<int> nccl_gid_index(const RdmaPort& port, const std::vector<std::string>& node_ipv4);

// This node's IPv4 addresses (getifaddrs), "127.0.0.1" included.
std::vector<std::string> node_ipv4_addresses();

}  // namespace provkit::host
