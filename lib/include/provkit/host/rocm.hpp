#pragma once
// ROCm on the box: its runtime libraries (found as the loader would) and the
// AMD GPUs the kernel's KFD driver lists in sysfs, with their gfx targets.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "provkit/elf/elf.hpp"

namespace provkit::host::rocm {

namespace fs = std::filesystem;

struct AmdGpu {
  int node = 0;                          // KFD topology node number
  std::string gfx_target;                // "gfx942"
  std::uint32_t gfx_target_version = 0;  // 90402
  std::string name;                      // the node's "name" file, when present
  std::uint32_t device_id = 0;
  int drm_render_minor = -1;  // the node's drm_render_minor: /sys/class/drm/renderD<N>
  // amdgpu's mem_info_vram_total / mem_info_vram_used of that render node, bytes; nullopt unread.
  std::optional<std::uint64_t> vram_total, vram_used;
};

// The KFD GPUs an engine sees under ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES
// (each a comma-separated list of indices into the GPUs of the list before it,
// the KFD order; the list ends at the first entry that is not one). Unset: all.
std::vector<AmdGpu> visible_gpus(const std::vector<AmdGpu>& gpus, const std::optional<std::string>& rocr,
                                 const std::optional<std::string>& hip);

// 90402 -> "gfx942", 90010 -> "gfx90a", 110000 -> "gfx1100": major, then
// minor and stepping as one hex digit each.
std::string gfx_target_name(std::uint32_t gfx_target_version);

// Nodes of <sysfs_root>/class/kfd/kfd/topology/nodes/N/properties with a
// non-zero gfx_target_version (CPU nodes have none). An absent tree gives an
// empty list. `sysfs_root` is "/sys" on a real host.
std::vector<AmdGpu> read_kfd_topology(const fs::path& sysfs_root = "/sys");

struct RuntimeLibrary {
  std::string name;              // "libamdhip64.so"
  std::optional<fs::path> path;  // where the loader (or ROCm's own lib dir) has it
};
// libamdhip64 and libhsa-runtime64: through the loader's search, then in
// $ROCM_PATH/lib and /opt/rocm/lib (ROCm's usual home, not always in the cache).
std::vector<RuntimeLibrary> find_runtime_libraries(const elf::SearchContext& ctx, const std::string& rocm_path);

}  // namespace provkit::host::rocm
