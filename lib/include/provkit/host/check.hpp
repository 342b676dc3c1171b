#pragma once
// The result of one envcheck check (or one inventory fact) and its two
// renderings: the table people read and the JSON deploy scripts parse.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace provkit::host::check {

// info: an inventory fact, not a verdict. Only fail changes the exit code.
enum class Status { info, pass, warn, fail };

// The rule a verdict applied. none: an inventory fact, or a check whose
// reason says it all. Rules marked (threshold) compare against what was asked.
enum class Rule {
  none,
  no_driver,                    // no NVIDIA driver answered
  libcuda_missing,              // NVML answers, libcuda.so.1 does not load
  driver_supports_runtime,      // the driver's CUDA version >= the runtime's
  minor_version_compatibility,  // same major, driver >= the major's floor
  insufficient_driver,          // neither
  gpu_selector,                 // --gpu / gpus: names a GPU
  no_gpu,                       // the driver lists no GPU
  native_fp8,                   // (threshold: the minimum compute capability)
  native_nvfp4,                 // (threshold: the minimum compute capability)
  min_compute_capability,       // (threshold)
  arch_list_match,              // a cubin of the same major and lower minor, or PTX
  vram_free,                    // (threshold: the size as written)
  c_compiler_search,            // Triton's order: $CC, gcc, clang
  nvcc_search,                  // CUDA_HOME, PATH, /usr/local/cuda
  library_search,               // the loader's search for a soname
  elf_readable,                 // the object and its dependencies can be read
  needed_resolution,            // every DT_NEEDED resolves, recursively
  disk_free,                    // (threshold: the size as written)
  port_bindable,                // bind(0.0.0.0:PORT)
  file_exists,
  file_sha256,
  rocm_present,          // ROCm runtime libraries and an AMD GPU in KFD
  link_copies,           // --link-test: the copies ran on the GPU
  min_pcie_link,         // (threshold: GEN:WIDTH) the link trained under load
  min_h2d,               // (threshold: GB/s) measured host-to-device bandwidth
  peer_path,             // a GPU pair's copies ran, direct or host-staged
  pcie_atomics_routing,  // every bridge up to the root port routes AtomicOps
  roce_gid_index,        // a RoCE v2 GID of this node's IPv4 on the port
  gfx_target,            // (threshold: the gfx target) every AMD GPU loads code built for it
  kernel_image,          // a cubin or code object for the GPU, else PTX the driver can JIT
  nccl_allreduce,        // the engine's libnccl ran a bf16 all-reduce over the selected GPUs
  nccl_transport,        // the transport NCCL chose for a pair: P2P, else staged (SHM) or over the network
  min_busbw,             // (threshold: GB/s) all-reduce bus bandwidth at the largest size
  max_allreduce_us,      // (threshold: microseconds) all-reduce latency of one token's hidden state
  engine_fit,  // (threshold: the engine's command line) its KV cache, state and weights fit the cards' free memory
};

// A setting of the request that a row's words send the reader to. The library knows the setting, not how it
// was given (a tool's flag, a profile's key), so its reason and fix name no flag and stand as sentences of their
// own; a tool adds its words for the hint (envcheck: the flag), where each value says.
enum class Hint {
  none,
  strict,                // reason: the strict setting made this minor-version-compatibility WARN a FAIL
  cc,                    // reason: the compiler check (envcheck's cc) proves the compiler builds
  allow_no_gpu_code,     // fix: the setting that lets a set with no GPU code pass, when a CPU-only set is meant
  pcie_atomics_as_root,  // fix: the AtomicOp-routing check run again as root (the library's fix says so plainly)
  nccl_lib_given,        // reason: it begins with the library the nccl_lib setting gave (a path that is no file)
  nccl_lib,              // fix: none was found: the nccl_lib setting names the engine's libnccl.so.2 (or python,
                         // the engine's environment as a path)
  link_test,             // fix: it ends naming the link test's rows (the link_test setting)
  gpu_selection,         // fix: it ends asking for GPUs to be selected (the gpus setting, CUDA_VISIBLE_DEVICES)
  amd_settings,          // fix: NVIDIA's settings (need, min_cc, arch_list) asked on AMD GPUs; AMD's are gfx,
                         // gpus and vram_free
};

struct Result {
  std::string name;  // "cuda 13.0", "need fp8 gpu 1", "lib libcudart.so.13"
  Status status = Status::info;
  Rule rule = Rule::none;
  std::string threshold;  // what the rule compares against, as asked ("8.9", "200G"); empty when it has none
  std::string reason;     // one plain sentence: what was found
  std::string fix;        // what to do about it; empty when nothing is known
  nlohmann::json data = nlohmann::json::object();  // the facts behind it, for --json
  bool advisory = false;                           // asked as severity: warn (a FAIL of it is shown as WARN)
  Hint hint = Hint::none;                          // the setting the words point to, for a tool to name
};

std::string status_word(Status s);  // "PASS", "WARN", "FAIL", "INFO"
// The rule as --json states it: "insufficient-driver", "free space >= 200G"; "" for none.
std::string rule_text(Rule rule, const std::string& threshold = "");

bool any_failed(const std::vector<Result>& results);

// A fixed-width table: STATUS, CHECK, RESULT columns; the fix on its own
// indented line under a row. Long reasons are not wrapped (grep-friendly).
std::string render_table(const std::vector<Result>& results);

// {"ok": bool, "checks": [{name, status, reason, fix, rule, data}...]}
nlohmann::json to_json(const std::vector<Result>& results);

}  // namespace provkit::host::check
