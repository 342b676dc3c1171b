#pragma once
// ROCm on the box: its runtime libraries (found as the loader would) and the
// AMD GPUs the kernel's KFD driver lists in sysfs, with their gfx targets.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "provkit/elf/elf.hpp"
#include "provkit/gpucode/amd_target.hpp"
#include "provkit/host/gpu.hpp"

namespace provkit::host::rocm {

namespace fs = std::filesystem;

struct AmdGpu {
  int node = 0;                          // KFD topology node number
  std::string gfx_target;                // "gfx942"
  std::uint32_t gfx_target_version = 0;  // 90402
  std::string name;                      // the node's "name" file, when present
  std::string product_name;  // amdgpu's product_name of its render node ("AMD Instinct MI300X"), when present
  std::uint32_t device_id = 0;
  std::uint64_t unique_id = 0;   // the node's unique_id: ROCm's UUID "GPU-<16 hex digits>"; 0 when it has none
  std::string pci_bus_id;        // "0000:c1:00.0" from the node's domain and location_id; "" when unknown
  std::uint32_t capability = 0;  // the node's capability bits (HSA_CAP_*)
  int drm_render_minor = -1;     // the node's drm_render_minor: /sys/class/drm/renderD<N>
  // amdgpu's mem_info_vram_total / mem_info_vram_used of that render node, bytes; nullopt unread.
  std::optional<std::uint64_t> vram_total, vram_used;
  // The modes code objects must match (LLVM target features): SRAM ECC from the capability's
  // SRAM_EDCSupport bit; XNACK as a process gets it (HSA_XNACK, amdgpu's noretry). nullopt: the
  // processor has no such feature (sramecc, xnack) or the mode cannot be told (xnack).
  std::optional<bool> sramecc, xnack;
  std::uint32_t gpu_id = 0;  // the node's gpu_id: KFD names a process's use of this GPU vram_<gpu_id>
  // The processes holding its memory: KFD's /sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id> (bytes), as
  // kfd_process.c writes them; compute only (KFD is the compute path). Their facts are read by the caller.
  std::vector<gpu::GpuProcess> processes;

  std::string uuid() const;  // "GPU-0123456789abcdef", "" without a unique_id
  std::string target_id() const;
  gpucode::AmdProcessor processor() const;  // as code objects see it (gpucode::match_target)  //
                                            // "gfx90a:sramecc+:xnack-" (a feature left out when unknown or absent)
};

// Find an AMD GPU by "0" (its index among the KFD GPUs, as ROCR_VISIBLE_DEVICES counts) or "GPU-..."
// (its UUID, or a unique prefix of 8 characters or more).
const AmdGpu* select_amd_gpu(const std::vector<AmdGpu>& gpus, const std::string& selector);

// Where the XNACK mode comes from: HSA_XNACK of the engine's environment ("1" on, "0" off) and amdgpu's
// noretry parameter (<sysfs_root>/module/amdgpu/parameters/noretry: 0 retry on, 1 off, -1 the chip's default).
struct XnackInputs {
  std::optional<std::string> hsa_xnack;
  std::optional<int> noretry;
};
std::optional<bool> xnack_mode(const std::string& gfx, const XnackInputs& in);

// The KFD GPUs an engine sees under ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES
// (each a comma-separated list of indices into the GPUs of the list before it,
// the KFD order; the list ends at the first entry that is not one). Unset: all.
std::vector<AmdGpu> visible_gpus(const std::vector<AmdGpu>& gpus, const std::optional<std::string>& rocr,
                                 const std::optional<std::string>& hip);

// 90402 -> "gfx942", 90010 -> "gfx90a", 110000 -> "gfx1100": major, then
// minor and stepping as one hex digit each.
std::string gfx_target_name(std::uint32_t gfx_target_version);

// Fills each GPU's `processes` from <sysfs_root>/class/kfd/kfd/proc/<pid>/vram_<gpu_id> (the pid, the bytes;
// the facts left for the caller). A process folder without this GPU's file has not opened it.
void read_kfd_processes(const fs::path& sysfs_root, std::vector<AmdGpu>& gpus);

// Nodes of <sysfs_root>/class/kfd/kfd/topology/nodes/N/properties with a
// non-zero gfx_target_version (CPU nodes have none). An absent tree gives an
// empty list. `sysfs_root` is "/sys" on a real host.
std::vector<AmdGpu> read_kfd_topology(const fs::path& sysfs_root = "/sys",
                                      const std::optional<std::string>& hsa_xnack = std::nullopt);

struct RuntimeLibrary {
  std::string name;              // "libamdhip64.so"
  std::optional<fs::path> path;  // where the loader (or ROCm's own lib dir) has it
};
// libamdhip64 and libhsa-runtime64: through the loader's search, then in
// $ROCM_PATH/lib and /opt/rocm/lib (ROCm's usual home, not always in the cache).
std::vector<RuntimeLibrary> find_runtime_libraries(const elf::SearchContext& ctx, const std::string& rocm_path);

}  // namespace provkit::host::rocm
