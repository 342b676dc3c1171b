#include "rocm.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "provkit/error.hpp"
#include "provkit/gpucode/amd_target.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::host::rocm {

std::string gfx_target_name(std::uint32_t v) {
  static const char hex[] = "0123456789abcdef";
  unsigned major = v / 10000, minor = (v / 100) % 100, stepping = v % 100;
  std::string out = "gfx" + std::to_string(major);
  out += minor < 16 ? std::string(1, hex[minor]) : std::to_string(minor);
  out += stepping < 16 ? std::string(1, hex[stepping]) : std::to_string(stepping);
  return out;
}

namespace {

// A small sysfs file's text: bounded, regular files only; nullopt when it cannot be read.
std::optional<std::string> read_small(const fs::path& file) {
  try {
    return util::read_file(file, 64u << 10);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<std::uint64_t> read_number(const fs::path& file) {
  auto text = read_small(file);
  if (!text) return std::nullopt;
  auto t = util::trim(*text);
  std::uint64_t v = 0;
  auto [p, e] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (e != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

constexpr std::uint32_t kCapSramEdcSupported = 0x04000000;  // HSA_CAP_SRAM_EDCSUPPORTED (kfd_topology.h)

bool one_of(const std::string& gfx, std::initializer_list<const char*> list) {
  return std::any_of(list.begin(), list.end(), [&](const char* g) { return gfx == g; });
}

// Per-process XNACK (the KFD lets each process choose, whatever noretry says): Aldebaran and later.
bool xnack_per_process(const std::string& gfx) {
  return one_of(gfx, {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"});
}

// amdgpu's noretry=-1: the chip's default (amdgpu_gmc_noretry_set: retry off on these).
std::optional<bool> default_noretry(const std::string& gfx) {
  if (one_of(gfx, {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"})) return true;
  if (one_of(gfx, {"gfx902", "gfx904", "gfx909", "gfx90c"})) return false;
  return std::nullopt;  // gfx10.1: the KFD's own rules (no XNACK past GC 10.1.1) are not modelled
}

}  // namespace

std::optional<bool> xnack_mode(const std::string& gfx, const XnackInputs& in) {
  if (!gpucode::has_xnack(gfx)) return std::nullopt;
  if (in.hsa_xnack && xnack_per_process(gfx)) {
    if (*in.hsa_xnack == "1") return true;
    if (*in.hsa_xnack == "0") return false;
  }
  // The process's default: XNACK on where retry is on (kfd_process_xnack_mode).
  std::optional<bool> noretry;
  if (in.noretry && *in.noretry >= 0) noretry = *in.noretry != 0;
  else noretry = default_noretry(gfx);
  if (!noretry) return std::nullopt;
  if (in.hsa_xnack && *in.hsa_xnack == "0") return false;  // retry-on chips run XNACK-off code
  return !*noretry;
}

std::string AmdGpu::uuid() const {
  if (!unique_id) return "";
  char buf[24];
  std::snprintf(buf, sizeof buf, "GPU-%016llx", static_cast<unsigned long long>(unique_id));
  return buf;
}

gpucode::AmdProcessor AmdGpu::processor() const { return {gfx_target, sramecc, xnack}; }

std::string AmdGpu::target_id() const {
  std::string t = gfx_target;
  if (sramecc) t += *sramecc ? ":sramecc+" : ":sramecc-";
  if (xnack) t += *xnack ? ":xnack+" : ":xnack-";
  return t;
}

const AmdGpu* select_amd_gpu(const std::vector<AmdGpu>& gpus, const std::string& selector) {
  std::size_t i = 0;
  auto [p, e] = std::from_chars(selector.data(), selector.data() + selector.size(), i);
  if (!selector.empty() && e == std::errc() && p == selector.data() + selector.size())
    return i < gpus.size() ? &gpus[i] : nullptr;
  const AmdGpu* found = nullptr;
  for (const auto& g : gpus) {
    const auto id = g.uuid();
    if (id.empty()) continue;
    if (util::lower(id) == util::lower(selector)) return &g;
    if (selector.size() >= 8 && util::lower(id).starts_with(util::lower(selector))) {
      if (found) return nullptr;  // ambiguous prefix
      found = &g;
    }
  }
  return found;
}

std::vector<AmdGpu> read_kfd_topology(const fs::path& sysfs_root, const std::optional<std::string>& hsa_xnack) {
  std::vector<AmdGpu> gpus;
  std::error_code ec;
  XnackInputs xnack{hsa_xnack, std::nullopt};
  if (auto v = read_small(sysfs_root / "module" / "amdgpu" / "parameters" / "noretry")) {
    auto t = util::trim(*v);
    int n = 0;
    auto [p, e] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (e == std::errc() && p == t.data() + t.size()) xnack.noretry = n;
  }
  auto nodes = sysfs_root / "class" / "kfd" / "kfd" / "topology" / "nodes";
  for (fs::directory_iterator it(nodes, ec), end; !ec && it != end; it.increment(ec)) {
    int node = 0;
    auto dir_name = it->path().filename().string();
    auto [p, perr] = std::from_chars(dir_name.data(), dir_name.data() + dir_name.size(), node);
    if (perr != std::errc() || p != dir_name.data() + dir_name.size()) continue;
    AmdGpu gpu;
    gpu.node = node;
    std::uint64_t domain = 0, location = 0;
    bool has_capability = false;
    std::istringstream props(read_small(it->path() / "properties").value_or(""));
    std::string line;
    while (std::getline(props, line)) {
      std::istringstream fields(line);
      std::string key;
      unsigned long long value = 0;
      if (!(fields >> key >> value)) continue;
      if (key == "gfx_target_version") gpu.gfx_target_version = static_cast<std::uint32_t>(value);
      if (key == "device_id") gpu.device_id = static_cast<std::uint32_t>(value);
      if (key == "drm_render_minor") gpu.drm_render_minor = static_cast<int>(value);
      if (key == "unique_id") gpu.unique_id = value;
      if (key == "capability") gpu.capability = static_cast<std::uint32_t>(value), has_capability = true;
      if (key == "domain") domain = value;
      if (key == "location_id") location = value;
    }
    if (gpu.gfx_target_version == 0) continue;  // a CPU node
    gpu.gfx_target = gfx_target_name(gpu.gfx_target_version);
    if (location) {  // (bus << 8) | (device << 3) | function, as kfd_topology.c writes it
      char bdf[32];
      std::snprintf(bdf, sizeof bdf, "%04llx:%02llx:%02llx.%llx", static_cast<unsigned long long>(domain),
                    static_cast<unsigned long long>(location >> 8),
                    static_cast<unsigned long long>((location >> 3) & 0x1f),
                    static_cast<unsigned long long>(location & 7));
      gpu.pci_bus_id = bdf;
    }
    if (has_capability && gpucode::has_sramecc(gpu.gfx_target))
      gpu.sramecc = (gpu.capability & kCapSramEdcSupported) != 0;
    gpu.xnack = xnack_mode(gpu.gfx_target, xnack);
    gpu.name = std::string(util::trim(read_small(it->path() / "name").value_or("")));
    if (auto id = read_number(it->path() / "gpu_id"); id && *id <= UINT32_MAX)
      gpu.gpu_id = static_cast<std::uint32_t>(*id);
    if (gpu.drm_render_minor >= 0) {
      auto dev = sysfs_root / "class" / "drm" / ("renderD" + std::to_string(gpu.drm_render_minor)) / "device";
      gpu.vram_total = read_number(dev / "mem_info_vram_total");
      gpu.vram_used = read_number(dev / "mem_info_vram_used");
      gpu.product_name = std::string(util::trim(read_small(dev / "product_name").value_or("")));
    }
    gpus.push_back(gpu);
  }
  std::sort(gpus.begin(), gpus.end(), [](const AmdGpu& a, const AmdGpu& b) { return a.node < b.node; });
  read_kfd_processes(sysfs_root, gpus);
  return gpus;
}

void read_kfd_processes(const fs::path& sysfs_root, std::vector<AmdGpu>& gpus) {
  std::error_code ec;
  std::vector<int> pids;
  for (fs::directory_iterator it(sysfs_root / "class" / "kfd" / "kfd" / "proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto name = it->path().filename().string();
    int pid = 0;
    auto [p, perr] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (perr == std::errc() && p == name.data() + name.size() && pid > 0) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  for (auto& g : gpus) {
    if (g.gpu_id == 0) continue;
    for (int pid : pids) {
      const auto vram = sysfs_root / "class" / "kfd" / "kfd" / "proc" / std::to_string(pid) /
                        ("vram_" + std::to_string(g.gpu_id));
      auto bytes = read_number(vram);
      if (!bytes) continue;  // this process has not opened this GPU
      g.processes.push_back(gpu::GpuProcess{.pid = pid, .memory = *bytes, .compute = true});
    }
  }
}

std::vector<AmdGpu> visible_gpus(const std::vector<AmdGpu>& gpus, const std::optional<std::string>& rocr,
                                 const std::optional<std::string>& hip) {
  auto narrow = [](const std::vector<AmdGpu>& from, const std::optional<std::string>& spec) {
    if (!spec) return from;
    std::vector<AmdGpu> out;
    std::stringstream list(*spec);
    std::string entry;
    while (std::getline(list, entry, ',')) {
      entry.erase(std::remove(entry.begin(), entry.end(), ' '), entry.end());
      std::size_t i = 0;
      auto [p, e] = std::from_chars(entry.data(), entry.data() + entry.size(), i);
      if (entry.empty() || e != std::errc() || p != entry.data() + entry.size() || i >= from.size()) break;
      if (std::none_of(out.begin(), out.end(), [&](const AmdGpu& g) { return g.node == from[i].node; }))
        out.push_back(from[i]);
    }
    return out;
  };
  return narrow(narrow(gpus, rocr), hip);
}

std::vector<RuntimeLibrary> find_runtime_libraries(const elf::SearchContext& ctx, const std::string& rocm_path) {
  std::vector<fs::path> rocm_dirs;
  if (!rocm_path.empty()) rocm_dirs.emplace_back(fs::path(rocm_path) / "lib");
  rocm_dirs.emplace_back("/opt/rocm/lib");
  // The development name first, then the sonames a runtime-only install has.
  const std::vector<std::pair<const char*, std::vector<std::string>>> wanted = {
      {"libamdhip64.so", {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}},
      {"libhsa-runtime64.so", {"libhsa-runtime64.so", "libhsa-runtime64.so.1"}},
  };
  std::vector<RuntimeLibrary> out;
  for (const auto& [label, names] : wanted) {
    RuntimeLibrary lib{label, std::nullopt};
    for (const auto& name : names) {
      lib.path = elf::find_library(name, ctx).path;
      // ROCm's own directory as if it were an RPATH: searched when the loader's places have nothing.
      if (!lib.path) lib.path = elf::find_library(name, elf::SearchContext{{}, {}, {}, ctx.want}, rocm_dirs).path;
      if (lib.path) break;
    }
    out.push_back(lib);
  }
  return out;
}

}  // namespace provkit::host::rocm
