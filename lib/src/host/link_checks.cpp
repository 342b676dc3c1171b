// envcheck's link rows: PCIe under load and peer paths (--link-test,
// --min-pcie, --min-h2d), AtomicOps along each GPU's PCI path
// (--pcie-atomics) and the RoCE GID index NCCL needs (--roce). The
// measurements are host/link_test, host/pcie and host/roce; this turns them
// into check::Results.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "detail.hpp"
#include "pcie.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"
#include "roce.hpp"

namespace provkit::host::detail {

namespace {

using nlohmann::json;

std::string gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}
double rounded(double v, double unit) { return std::round(v / unit) / std::round(1 / unit); }  // unit 0.01, 0.001
std::string link_text(const host::LinkReading& l) {
  return "gen " + (l.gen > 0 ? std::to_string(l.gen) : "?") + " x" + (l.width > 0 ? std::to_string(l.width) : "?");
}
json link_json(const host::LinkReading& l) { return {{"gen", l.gen}, {"width", l.width}}; }

// "gpu 0" by NVML's index where NVML knows the bus id; else CUDA's ordinal.
std::string gpu_name(const gpu::Snapshot& s, const std::string& bus_id, int cuda_ordinal) {
  for (const auto& d : s.devices)
    if (!bus_id.empty() && d.pci_bus_id == bus_id) return "gpu " + std::to_string(d.index);
  return "cuda " + std::to_string(cuda_ordinal);
}

Result link_row(const host::GpuLinkTest& g, const std::string& who) {
  Result r{.name = "link " + who,
           .status = Status::pass,
           .rule = Rule::link_copies,
           .data = {{"pci_bus_id", g.pci_bus_id},
                    {"cuda_ordinal", g.ordinal},
                    {"idle", link_json(g.idle)},
                    {"under_load", link_json(g.under_load)},
                    {"max", link_json(g.max)},
                    {"samples", g.samples},
                    {"nvml_error", g.nvml_error}}};
  if (!g.error.empty()) {
    r.status = Status::fail;
    r.reason = who + " (" + g.pci_bus_id + "): the copies did not run: " + g.error;
    r.fix = "stop what holds the GPU (nvidia-smi --query-compute-apps=pid --format=csv) and check dmesg for Xid errors";
    return r;
  }
  // The fraction of what the link trained to under load could carry (else of its maximum).
  const auto& basis = g.under_load.known() ? g.under_load : g.max;
  const double theory = host::pcie_gb_per_s(basis);
  r.data["h2d_gb_per_s"] = rounded(g.h2d_gb_per_s, 0.01);
  r.data["d2h_gb_per_s"] = rounded(g.d2h_gb_per_s, 0.01);
  r.data["theoretical_gb_per_s"] = theory > 0 ? json(rounded(theory, 0.01)) : json(nullptr);
  r.data["h2d_fraction"] = theory > 0 ? json(rounded(g.h2d_gb_per_s / theory, 0.001)) : json(nullptr);
  r.data["d2h_fraction"] = theory > 0 ? json(rounded(g.d2h_gb_per_s / theory, 0.001)) : json(nullptr);
  r.reason = who + " (" + g.pci_bus_id + "): H2D " + gbps(g.h2d_gb_per_s) + " GB/s, D2H " + gbps(g.d2h_gb_per_s) +
             " GB/s";
  if (theory > 0)
    r.reason += " (" + std::to_string(static_cast<int>(std::lround(100 * g.h2d_gb_per_s / theory))) + "% / " +
                std::to_string(static_cast<int>(std::lround(100 * g.d2h_gb_per_s / theory))) + "% of " +
                link_text(basis) + "'s " + gbps(theory) + " GB/s)";
  if (g.under_load.known())
    r.reason += "; PCIe " + link_text(g.under_load) + " under load (" + std::to_string(g.samples) + " readings), " +
                link_text(g.idle) + " idle, " + link_text(g.max) + " max";
  else
    r.reason += "; the link under load was not read: " + (g.nvml_error.empty() ? "NVML gave no reading" : g.nvml_error);
  return r;
}

}  // namespace

std::optional<std::vector<std::string>> measured_bus_ids(const Request& req, Probes& probes, const std::string& row,
                                                         Rule rule, const std::string& purpose,
                                                         std::vector<Result>& out) {
  const auto& s = probes.driver();
  std::vector<std::string> bus_ids;
  // Only the GPUs the engine sees (CUDA_VISIBLE_DEVICES), and of those the ones --gpu names; a hidden or
  // unknown selector has its own row (gpu_checks).
  const auto& vis = probes.visibility();
  const auto visible = probes.engine_gpus();
  if (!req.gpus.empty() && s.devices.empty()) return std::nullopt;  // the selectors' rows say there is no driver
  if (vis.restricted && visible.empty() && !s.devices.empty()) {
    out.push_back({.name = row,
                   .status = Status::fail,
                   .rule = rule,
                   .reason = "CUDA_VISIBLE_DEVICES='" + vis.text + "' leaves the engine no GPU to " + purpose,
                   .fix = "set CUDA_VISIBLE_DEVICES to the indices or UUIDs of the engine's GPUs, or unset it",
                   .data = {{"cuda_visible_devices", vis.text}}});
    return std::nullopt;
  }
  std::vector<const gpu::Device*> wanted;
  for (const auto& d : visible)
    if (req.gpus.empty() || std::any_of(req.gpus.begin(), req.gpus.end(), [&](const auto& sel) {
          const auto* p = gpu::select_device(visible, sel);
          return p && p->index == d.index;
        }))
      wanted.push_back(&d);
  // Without NVML's list there is nothing to choose by (libcuda, on a real host, reads the variable itself).
  const bool choose = !s.devices.empty() && (vis.restricted || !req.gpus.empty());
  if (choose)
    for (const auto* d : wanted)
      if (!d->pci_bus_id.empty()) bus_ids.push_back(d->pci_bus_id);
  if (choose && (bus_ids.size() != wanted.size() || wanted.empty())) {
    // A known GPU without a bus id cannot be matched to libcuda's.
    if (!wanted.empty())
      out.push_back({.name = row,
                     .status = Status::fail,
                     .rule = rule,
                     .reason = "the selected GPUs' PCI bus ids are unknown (NVML was not usable: " + s.nvml_error +
                               "), so they cannot be found among libcuda's devices",
                     .fix = kInstallDriver});
    return std::nullopt;
  }
  return bus_ids;
}

void link_checks(const Request& req, Probes& probes, std::vector<Result>& out) {
  if (!req.wants_link_test()) return;
  const auto& s = probes.driver();
  host::LinkTestOptions options{.cuda_library = probes.env().driver.cuda_library,
                                .nvml_library = probes.env().driver.nvml_library,
                                .seconds_per_gpu = req.link_test_seconds()};
  auto bus_ids = measured_bus_ids(req, probes, "link test", Rule::link_copies, "copy to", out);
  if (!bus_ids) return;
  options.bus_ids = *bus_ids;
  auto report = host::run_link_test(options);
  if (!report.error.empty() || report.gpus.empty()) {
    out.push_back(
        {.name = "link test",
         .status = Status::fail,
         .rule = Rule::link_copies,
         .reason = report.error.empty() ? "libcuda lists no GPU to copy to" : "no copies could run: " + report.error,
         .fix = kInstallDriver});
    return;
  }
  for (const auto& g : report.gpus) {
    const auto who = gpu_name(s, g.pci_bus_id, g.ordinal);
    const auto said = who + " (" + g.pci_bus_id + ")";  // the index and the PCI address, as the link row says
    out.push_back(link_row(g, who));
    if (req.min_pcie) {
      Result r{.name = "min-pcie " + who,
               .status = Status::pass,
               .rule = Rule::min_pcie_link,
               .threshold = req.min_pcie_text,
               .data = {{"under_load", link_json(g.under_load)}, {"max", link_json(g.max)}}};
      if (!g.under_load.known()) {
        r.status = Status::fail;
        r.reason = said + ": the link under load could not be read (" + (g.error.empty() ? g.nvml_error : g.error) +
                   ")";
        r.fix = kInstallDriver;
      } else if (g.under_load.gen >= req.min_pcie->gen && g.under_load.width >= req.min_pcie->width) {
        r.reason = said + " trained " + link_text(g.under_load) + " under load >= " + link_text(*req.min_pcie);
      } else {
        r.status = Status::fail;
        r.reason = said + " trained " + link_text(g.under_load) + " under load < " + link_text(*req.min_pcie) +
                   " asked (the card and slot allow " + link_text(g.max) + ")";
        r.fix = "seat the card in a slot wired for " + link_text(*req.min_pcie) +
                " from the CPU (check risers, bifurcation and the board's lane sharing)";
      }
      out.push_back(r);
    }
    if (req.min_h2d) {
      Result r{.name = "min-h2d " + who,
               .status = Status::pass,
               .rule = Rule::min_h2d,
               .threshold = req.min_h2d_text,
               .data = {{"h2d_gb_per_s", rounded(g.h2d_gb_per_s, 0.01)}}};
      r.reason = said + " copies host to device at " + gbps(g.h2d_gb_per_s) + " GB/s";
      if (!g.error.empty() || g.h2d_gb_per_s < *req.min_h2d) {
        r.status = Status::fail;
        r.reason += " < " + req.min_h2d_text + " GB/s asked" + (g.error.empty() ? "" : ": " + g.error);
        r.fix = "read the link under load (the link row): a narrow or slow slot, or another card sharing its lanes";
      }
      out.push_back(r);
    }
  }
  for (const auto& p : report.peers) {
    const auto a = gpu_name(s, p.a_bus_id, p.a), b = gpu_name(s, p.b_bus_id, p.b);
    Result r{.name = "peer " + a.substr(a.find(' ') + 1) + "-" + b.substr(b.find(' ') + 1),
             .status = p.can_access ? Status::pass : Status::warn,
             .rule = Rule::peer_path,
             .data = {{"a", p.a_bus_id},
                      {"b", p.b_bus_id},
                      {"direct", p.can_access},
                      {"gb_per_s", p.gb_per_s ? json(rounded(*p.gb_per_s, 0.01)) : json(nullptr)}}};
    r.reason = util::concat(
        {a, " -> ", b, ": ",
         p.can_access
             ? "direct peer access (cuDeviceCanAccessPeer)"
             : "no direct peer access (cuDeviceCanAccessPeer says no): copies are staged through host memory"});
    if (p.gb_per_s) r.reason += ", " + gbps(*p.gb_per_s) + " GB/s measured";
    if (!p.error.empty()) {
      r.status = Status::fail;
      r.reason += "; the copies did not run: " + p.error;
    }
    if (!p.can_access)
      r.fix =
          "every all-reduce between these two goes through host memory: expect this bandwidth, or use GPUs with P2P";
    out.push_back(r);
  }
}

void pcie_atomics_rows(Probes& probes, bool as_check, std::vector<Result>& out) {
  const auto& sysfs = probes.env().sysfs_root;
  const auto& env = probes.env();
  struct Gpu {
    std::string who, bus_id, hidden;  // hidden: why the engine does not see it ("" when it does)
  };
  std::vector<Gpu> gpus;
  const auto& vis = probes.visibility();
  for (const auto& d : probes.driver().devices)
    if (!d.pci_bus_id.empty())
      gpus.push_back({"gpu " + std::to_string(d.index), d.pci_bus_id, visibility_note(vis, d.index)});
  // AMD cards by their DRM device; ROCR_/HIP_VISIBLE_DEVICES name KFD GPUs, matched by PCI bus id.
  const bool amd_restricted = env.rocr_visible_devices || env.hip_visible_devices;
  std::vector<std::string> amd_visible;
  if (amd_restricted)
    for (const auto& g : probes.engine_amd_gpus()) amd_visible.push_back(g.pci_bus_id);
  for (const auto& id : host::amd_gpu_bus_ids(sysfs)) {
    // The card's index as the other AMD rows give it (KFD's node, "amd1"), where KFD lists the card.
    const auto& kfd = probes.rocm().gpus;
    const auto node = std::find_if(kfd.begin(), kfd.end(), [&](const rocm::AmdGpu& g) { return g.pci_bus_id == id; });
    std::string hidden;
    if (amd_restricted && std::find(amd_visible.begin(), amd_visible.end(), id) == amd_visible.end())
      hidden = "; not visible to the engine (" + amd_visibility_text(env) + ")";
    gpus.push_back({node == kfd.end() ? "amd " + id : "amd" + std::to_string(node->node), id, hidden});
  }
  // A check looks at the GPUs the engine sees, as every GPU check does; the inventory shows all, marked.
  if (as_check) {
    const bool any = !gpus.empty();
    gpus.erase(std::remove_if(gpus.begin(), gpus.end(), [](const Gpu& g) { return !g.hidden.empty(); }), gpus.end());
    if (any && gpus.empty()) {
      out.push_back({.name = "pcie-atomics",
                     .status = Status::fail,
                     .rule = Rule::pcie_atomics_routing,
                     .reason = "no GPU is visible to the engine (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, "
                               "HIP_VISIBLE_DEVICES): nothing to look at",
                     .fix = "set the visibility variables to the engine's GPUs, or unset them"});
      return;
    }
  }
  if (gpus.empty() && as_check)
    out.push_back({.name = "pcie-atomics",
                   .status = Status::fail,
                   .rule = Rule::pcie_atomics_routing,
                   .reason = "no GPU to look at: NVML gave no PCI bus id and " + (sysfs / "class/drm").string() +
                             " has no AMD device",
                   .fix = kInstallDriver});
  auto function_json = [](const host::PcieFunction& f) {
    return json{{"bdf", f.bdf},
                {"readable", f.readable},
                {"why", f.why},
                {"type", host::port_type_name(f.type)},
                {"routing", f.caps.routing},
                {"completer32", f.caps.completer32},
                {"completer64", f.caps.completer64},
                {"cas128", f.caps.cas128}};
  };
  for (const auto& [who, id, hidden] : gpus) {
    const auto& path = probes.atomics_path(id);
    if (!as_check && !path.readable()) continue;  // the inventory shows only what it could read
    Result r{.name = "pcie-atomics " + who,
             .status = as_check ? Status::pass : Status::info,
             .rule = as_check ? Rule::pcie_atomics_routing : Rule::none,
             .data = {{"bdf", id}, {"device", function_json(path.device)}, {"bridges", json::array()}}};
    for (const auto& b : path.bridges) r.data["bridges"].push_back(function_json(b));
    const auto* blocking = path.first_blocking_bridge();
    r.data["first_blocking_bridge"] = blocking ? json(blocking->bdf) : json(nullptr);
    const auto& c = path.device.caps;
    auto bits = [](const host::AtomicCaps& k) {
      return std::string("32bit") + (k.completer32 ? "+" : "-") + " 64bit" + (k.completer64 ? "+" : "-") +
             " 128bitCAS" + (k.cas128 ? "+" : "-");
    };
    if (!path.error.empty()) {
      r.status = Status::fail;
      r.reason = who + ": " + path.error;
    } else if (!path.readable()) {
      const auto& unread = !path.device.readable ? path.device
                                                 : *std::find_if(path.bridges.begin(), path.bridges.end(),
                                                                 [](const auto& b) { return !b.readable; });
      r.status = Status::fail;
      r.reason = util::concat({who, " (", id, "): cannot tell: ", unread.why});
      r.fix = "run this check as root (sudo): config space past 64 bytes is root's";
      r.hint = Hint::pcie_atomics_as_root;
    } else if (path.bridges.empty()) {
      r.status = as_check ? Status::warn : Status::info;
      r.reason = util::concat({who, " (", id,
                               ") sits on the host bridge's bus with no root port in sysfs (a virtual machine's flat ",
                               "bus?): routing cannot be read; the device completes AtomicOps ", bits(c)});
    } else if (blocking) {
      r.status = as_check ? Status::fail : Status::warn;
      r.reason = util::concat({who, " (", id, "): AtomicOps stop at ", blocking->bdf, " (",
                               host::port_type_name(blocking->type), ", AtomicOp Routing-) on the way to root port ",
                               path.bridges.back().bdf});
      r.fix =
          "put the GPU in a slot on a CPU root port whose path routes AtomicOps (lspci -vv: AtomicOpsCap: Routing+); "
          "ROCm's multi-GPU runtimes need them";
    } else {
      r.reason = util::concat({who, " (", id, "): every bridge up to root port ", path.bridges.back().bdf, " (",
                               std::to_string(path.bridges.size()), " in all) routes AtomicOps; the device completes ",
                               bits(c)});
    }
    if (!hidden.empty()) {
      r.reason += hidden;
      r.data["visible"] = false;
    }
    out.push_back(r);
  }
}

namespace {

// The three variables NCCL needs for this port, as KEY=VALUE lines a script exports or systemd reads: the HCA
// and the interface with NCCL's "=" (an exact name: without it "mlx5_1" also selects "mlx5_10", "eth0" also
// "eth0.100"), the GID index. None when the GID names no netdev, or a name would have to be escaped to be
// printed (an escaped name is another name: NCCL would find no such device).
std::optional<std::vector<std::string>> nccl_env(const host::RdmaPort& p, const host::GidEntry& g, int index) {
  auto plain = [](const std::string& name) {
    return !name.empty() && util::printable(name) == name && name.find_first_of(" ,=:^\\") == std::string::npos;
  };
  if (!plain(p.device) || !plain(g.netdev)) return std::nullopt;
  return std::vector<std::string>{"NCCL_IB_HCA==" + p.device + ":" + std::to_string(p.port),
                                  "NCCL_IB_GID_INDEX=" + std::to_string(index), "NCCL_SOCKET_IFNAME==" + g.netdev};
}

}  // namespace

void roce_rows(const std::string& device, Probes& probes, bool as_check, std::vector<Result>& out) {
  const auto& sysfs = probes.env().sysfs_root;
  auto ports = host::read_rdma_ports(sysfs, device);
  if (ports.empty()) {
    if (as_check)
      out.push_back(
          {.name = "roce",
           .status = Status::fail,
           .rule = Rule::roce_gid_index,
           .reason = "no RDMA device" + (device.empty() ? "" : " '" + util::printable(device) + "'") + " in " +
                     (sysfs / "class/infiniband").string(),
           .fix = "load the RDMA driver of the NIC (mlx5_ib, bnxt_re, irdma) or name a device that is there"});
    return;
  }
  const auto ipv4 = host::node_ipv4_addresses();
  for (const auto& p : ports) {
    Result r{.name = "roce " + p.device + "/" + std::to_string(p.port),
             .status = as_check ? Status::pass : Status::info,
             .rule = as_check ? Rule::roce_gid_index : Rule::none,
             .data = {{"device", p.device},
                      {"port", p.port},
                      {"link_layer", p.link_layer},
                      {"state", p.state},
                      {"holes", p.holes},
                      {"node_ipv4", ipv4},
                      {"gids", json::array()}}};
    std::string table;
    for (const auto& g : p.gids) {
      r.data["gids"].push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev}});
      table += (table.empty() ? "" : ", ") + std::to_string(g.index) + " " + g.gid + " (" +
               (g.type.empty() ? "?" : g.type) + (g.netdev.empty() ? "" : ", " + g.netdev) + ")";
    }
    std::string holes;
    for (int h : p.holes) holes += (holes.empty() ? "" : ",") + std::to_string(h);
    table = util::concat({"GIDs ", table.empty() ? "none" : table, holes.empty() ? "" : "; holes at ", holes});
    auto index = host::nccl_gid_index(p, ipv4);
    r.data["nccl_ib_gid_index"] = index ? json(*index) : json(nullptr);
    r.data["netdev"] = nullptr;
    r.data["nccl_env"] = nullptr;  // only where there is an index to export
    if (p.link_layer == "InfiniBand") {
      r.status = Status::info;
      r.rule = Rule::none;
      r.reason = p.device + " port " + std::to_string(p.port) + " is InfiniBand: NCCL_IB_GID_INDEX does not apply; " +
                 table;
    } else if (!p.active()) {
      // A GID entry on a port that is not up carries no traffic: NCCL would time out on it.
      r.status = as_check ? Status::fail : Status::warn;
      r.reason = p.device + " port " + std::to_string(p.port) + " is not ACTIVE (state " + p.state + ")" +
                 (index ? "; its NCCL_IB_GID_INDEX would be " + std::to_string(*index) : "") + "; " + table;
      r.data["nccl_ib_gid_index"] = nullptr;  // not a value to export: the port carries nothing
      r.fix =
          "bring the port up: check the cable and the switch port, `ip link set <netdev> up`, and `rdma link show " +
          p.device + "/" + std::to_string(p.port) + "`";
    } else if (index) {
      const auto& g = *std::find_if(p.gids.begin(), p.gids.end(), [&](const auto& e) { return e.index == *index; });
      r.reason = "NCCL_IB_GID_INDEX=" + std::to_string(*index) + ": RoCE v2 " + g.gid +
                 (g.netdev.empty() ? "" : " on " + g.netdev) + "; " + table;
      if (!g.netdev.empty()) r.data["netdev"] = g.netdev;
      if (auto env = nccl_env(p, g, *index)) {
        r.data["nccl_env"] = *env;
        std::string lines;
        for (const auto& line : *env) lines += (lines.empty() ? "" : ", ") + line;
        r.reason = util::concat({"NCCL: ", lines, "; RoCE v2 ", g.gid, " on ", g.netdev, "; ", table});
      }
    } else {
      std::string addrs;
      for (const auto& a : ipv4) addrs += (addrs.empty() ? "" : ", ") + a;
      r.status = as_check ? Status::fail : Status::warn;
      r.reason = p.device + " port " + std::to_string(p.port) + " has no RoCE v2 GID for this node's IPv4 addresses (" +
                 (addrs.empty() ? "none" : addrs) + "); " + table;
      r.fix =
          "give the port's netdev its IPv4 address (ip addr add) and check `rdma link`; do not pin NCCL_IB_GID_INDEX: "
          "a link-local IPv6 entry regenerates and a hole shifts the index";
    }
    out.push_back(r);
  }
}

}  // namespace provkit::host::detail
