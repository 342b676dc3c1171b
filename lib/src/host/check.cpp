#include "provkit/host/check.hpp"

#include "provkit/util/text.hpp"

#include <algorithm>

namespace provkit::host::check {

std::string status_word(Status s) {
  switch (s) {
    case Status::info: return "INFO";
    case Status::pass: return "PASS";
    case Status::warn: return "WARN";
    case Status::fail: return "FAIL";
  }
  return "?";
}

std::string rule_text(Rule rule, const std::string& threshold) {
  switch (rule) {
    case Rule::none: return "";
    case Rule::no_driver: return "no-driver";
    case Rule::libcuda_missing: return "libcuda-missing";
    case Rule::driver_supports_runtime: return "driver-supports-runtime";
    case Rule::minor_version_compatibility: return "minor-version-compatibility";
    case Rule::insufficient_driver: return "insufficient-driver";
    case Rule::gpu_selector: return "gpu-selector";
    case Rule::no_gpu: return "no-gpu";
    case Rule::native_fp8: return "fp8 needs compute capability >= " + threshold;
    case Rule::native_nvfp4: return "nvfp4 needs compute capability >= " + threshold;
    case Rule::min_compute_capability: return "compute capability >= " + threshold;
    case Rule::arch_list_match: return "cubin of the same major and equal or lower minor, or PTX";
    case Rule::vram_free: return "free GPU memory >= " + threshold;
    case Rule::c_compiler_search: return "Triton's rule: $CC, else gcc, else clang";
    case Rule::nvcc_search: return "CUDA_HOME, then PATH, then /usr/local/cuda";
    case Rule::library_search: return "LD_LIBRARY_PATH, /etc/ld.so.cache, default directories";
    case Rule::elf_readable: return "elf-readable";
    case Rule::needed_resolution:
      return "DT_NEEDED resolution (RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache, default directories)";
    case Rule::disk_free: return "free space >= " + threshold;
    case Rule::port_bindable: return "bind(0.0.0.0:PORT) succeeds";
    case Rule::file_exists: return "exists";
    case Rule::file_sha256: return "sha256 matches";
    case Rule::rocm_present: return "libamdhip64 and libhsa-runtime64 found, and an AMD GPU in KFD";
    case Rule::link_copies: return "host-device copies through the CUDA driver API";
    case Rule::min_pcie_link: return "PCIe link under load >= gen:width " + threshold;
    case Rule::min_h2d: return "host-to-device copies >= " + threshold + " GB/s";
    case Rule::peer_path: return "copies between the pair, direct or host-staged";
    case Rule::pcie_atomics_routing: return "AtomicOp routing on every bridge up to the root port";
    case Rule::roce_gid_index: return "a RoCE v2 GID of this node's IPv4 address";
    case Rule::gfx_target: return "every AMD GPU (KFD) loads code built for " + threshold;
    case Rule::engine_fit: return "the engine's memory fits each card's free memory: " + threshold;
    case Rule::kernel_image:
      return "a cubin of the GPU's major at or below its minor (a: its own arch, f: its family), a code object for its "
             "gfx target, else PTX the driver can JIT";
    case Rule::nccl_allreduce: return "a bf16 all-reduce through the engine's libnccl (ncclCommInitAll)";
    case Rule::nccl_transport: return "NCCL's transport for the pair, as its INFO log states it";
    case Rule::min_busbw: return "all-reduce bus bandwidth >= " + threshold + " GB/s at the largest size";
    case Rule::max_allreduce_us: return "one token's all-reduce <= " + threshold + " us";
  }
  return "?";
}

bool any_failed(const std::vector<Result>& results) {
  return std::any_of(results.begin(), results.end(), [](const Result& r) { return r.status == Status::fail; });
}

std::string render_table(const std::vector<Result>& results) {
  // Names and sentences quote what the box has (DT_NEEDED names, paths, the driver's strings): escaped, so
  // that a newline in a library's name cannot forge a row.
  struct Row {
    std::string name, reason, fix;
  };
  std::vector<Row> rows;
  std::size_t name_width = 5;  // "CHECK"
  for (const auto& r : results) {
    rows.push_back({util::printable(r.name), util::printable(r.reason), util::printable(r.fix)});
    name_width = std::max(name_width, rows.back().name.size());
  }
  auto pad = [](std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
  };
  std::string out = pad("STATUS", 7) + pad("CHECK", name_width + 2) + "RESULT\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    out += pad(status_word(results[i].status), 7) + pad(rows[i].name, name_width + 2) + rows[i].reason + "\n";
    if (!rows[i].fix.empty()) out += pad("", 7 + name_width + 2) + "fix: " + rows[i].fix + "\n";
  }
  return out;
}

nlohmann::json to_json(const std::vector<Result>& results) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& r : results) {
    checks.push_back({{"name", r.name},
                      {"status", status_word(r.status)},
                      {"reason", r.reason},
                      {"fix", r.fix},
                      {"rule", rule_text(r.rule, r.threshold)},
                      {"severity", r.advisory ? "warn" : "fail"},
                      {"data", r.data}});
  }
  return {{"ok", !any_failed(results)}, {"checks", checks}};
}

}  // namespace provkit::host::check
