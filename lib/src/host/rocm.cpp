#include "provkit/host/rocm.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace provkit::host::rocm {

std::string gfx_target_name(std::uint32_t v) {
  static const char hex[] = "0123456789abcdef";
  unsigned major = v / 10000, minor = (v / 100) % 100, stepping = v % 100;
  std::string out = "gfx" + std::to_string(major);
  out += minor < 16 ? std::string(1, hex[minor]) : std::to_string(minor);
  out += stepping < 16 ? std::string(1, hex[stepping]) : std::to_string(stepping);
  return out;
}

std::vector<AmdGpu> read_kfd_topology(const fs::path& sysfs_root) {
  std::vector<AmdGpu> gpus;
  std::error_code ec;
  auto nodes = sysfs_root / "class" / "kfd" / "kfd" / "topology" / "nodes";
  for (fs::directory_iterator it(nodes, ec), end; !ec && it != end; it.increment(ec)) {
    int node = 0;
    auto dir_name = it->path().filename().string();
    auto [p, perr] = std::from_chars(dir_name.data(), dir_name.data() + dir_name.size(), node);
    if (perr != std::errc() || p != dir_name.data() + dir_name.size()) continue;
    std::ifstream props(it->path() / "properties");
    AmdGpu gpu;
    gpu.node = node;
    std::string line;
    while (std::getline(props, line)) {
      std::istringstream fields(line);
      std::string key;
      unsigned long long value = 0;
      if (!(fields >> key >> value)) continue;
      if (key == "gfx_target_version") gpu.gfx_target_version = static_cast<std::uint32_t>(value);
      if (key == "device_id") gpu.device_id = static_cast<std::uint32_t>(value);
      if (key == "drm_render_minor") gpu.drm_render_minor = static_cast<int>(value);
    }
    if (gpu.gfx_target_version == 0) continue;  // a CPU node
    gpu.gfx_target = gfx_target_name(gpu.gfx_target_version);
    std::ifstream name_file(it->path() / "name");
    std::getline(name_file, gpu.name);
    if (gpu.drm_render_minor >= 0) {
      auto dev = sysfs_root / "class" / "drm" / ("renderD" + std::to_string(gpu.drm_render_minor)) / "device";
      auto number = [](const fs::path& f) -> std::optional<std::uint64_t> {
        std::ifstream in(f);
        unsigned long long v = 0;
        if (in >> v) return v;
        return std::nullopt;
      };
      gpu.vram_total = number(dev / "mem_info_vram_total");
      gpu.vram_used = number(dev / "mem_info_vram_used");
    }
    gpus.push_back(gpu);
  }
  std::sort(gpus.begin(), gpus.end(), [](const AmdGpu& a, const AmdGpu& b) { return a.node < b.node; });
  return gpus;
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
  if (!rocm_path.empty()) rocm_dirs.push_back(fs::path(rocm_path) / "lib");
  rocm_dirs.push_back("/opt/rocm/lib");
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
