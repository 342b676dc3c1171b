#pragma once
// Inside envcheck (not installed): the probes one run shares, the words the
// check families and the inventory share, and each family's entry point.
// run_checks (detail.cpp) and inventory (inventory.cpp) compose them.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pcie.hpp"
#include "provkit/elf/elf.hpp"
#include "provkit/host/envcheck.hpp"
#include "rocm.hpp"
#include "toolchain.hpp"

namespace provkit::host::detail {

using check::Hint;
using check::Result;
using check::Rule;
using check::Status;

struct RocmFacts {
  std::vector<rocm::RuntimeLibrary> libs;
  std::vector<rocm::AmdGpu> gpus;
};

// What one run looks at on this host. Each thing is looked at once, when a
// check or the inventory first asks, and shared by everything after.
class Probes {
 public:
  explicit Probes(const Environment& env) : env_(env) {}
  const Environment& env() const { return env_; }

  const gpu::Snapshot& driver();
  // CUDA_VISIBLE_DEVICES over the driver's GPUs, and the GPUs it leaves the engine, in its order.
  const gpu::Visibility& visibility();
  std::vector<gpu::Device> engine_gpus();
  // The AMD GPUs ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES leave the engine.
  std::vector<rocm::AmdGpu> engine_amd_gpus();
  const std::optional<toolchain::Compiler>& c_compiler();  // Triton's order: $CC, gcc, clang
  const std::optional<toolchain::Nvcc>& nvcc();            // CUDA_HOME, PATH, cuda_root/cuda
  const toolchain::PythonLook& python_look();              // looked for, not run
  const elf::SearchContext& search_context();              // the loader's, with env's LD_LIBRARY_PATH
  const RocmFacts& rocm();
  // The PCIe path of a function by its bus id (sysfs spelling), read once: the inventory reads the NVIDIA
  // display functions' paths while the driver thread works, and the atomics rows find them here.
  const AtomicsPath& atomics_path(const std::string& bdf);

 private:
  const Environment& env_;
  std::optional<gpu::Snapshot> driver_;
  std::optional<gpu::Visibility> visibility_;
  std::optional<std::optional<toolchain::Compiler>> c_compiler_;
  std::optional<std::optional<toolchain::Nvcc>> nvcc_;
  std::optional<toolchain::PythonLook> python_look_;
  std::optional<elf::SearchContext> search_context_;
  std::optional<RocmFacts> rocm_;
  std::map<std::string, AtomicsPath> atomics_paths_;
};

// ---- Words shared by the checks and the inventory ----------------------------
std::string cc_text(int major, int minor);  // "8.9"
std::string cuda_text(int encoded);         // 13000 -> "13.0"
nlohmann::json device_json(const gpu::Device& d);
using gpu::no_driver_reason;
// The processes holding a GPU's memory (seat_words.cpp): "; its memory is held by PID 1234 (20.0 GiB, unit x.service,
// listens on 127.0.0.1:8080): CMD; ..." ("" for none), the steps that stop them ("systemctl stop x.service;
// kill 99"), and the JSON `processes` array.
// Of a GPU's processes (NVML's or the driver tool's on NVIDIA, KFD's on AMD).
std::string seats_text(const std::vector<gpu::GpuProcess>& processes);
std::string seats_fix(const std::vector<gpu::GpuProcess>& processes);
nlohmann::json seats_json(const std::vector<gpu::GpuProcess>& processes);
// "; not visible to the engine (CUDA_VISIBLE_DEVICES=...)" for a GPU it hides, else "".
std::string visibility_note(const gpu::Visibility& v, int index);
// A MIG instance CUDA_VISIBLE_DEVICES gives the engine: "MIG-... (GPU instance 1, ...)", and its data.
std::string mig_text(const gpu::VisibleMig& m);
nlohmann::json mig_json(const gpu::VisibleMig& m);
// A WARN row naming the MIG ids of CUDA_VISIBLE_DEVICES that no instance has; none when there are none.
std::optional<Result> unknown_mig_row(const gpu::Visibility& v);
extern const char* const kInstallDriver;
// What a forward-compatibility libcuda (loaded, or lying in cuda_root) means
// here: "; ..." clauses for a reason, and their paths into data.
std::string compat_note(const gpu::Snapshot& s, const Environment& env, nlohmann::json& data);
// The toolkit's release without running nvcc ("" when it does not say).
std::string toolkit_version(const fs::path& root);
// "libamdhip64.so at ...; 1 AMD GPU: node 1 gfx942", and the same into data.
std::string rocm_text(const RocmFacts& f, nlohmann::json& data);

// ---- The check families --------------------------------------------------------
Result cuda_check(const Request& req, Probes& probes);  // gpu_checks.cpp
void gpu_checks(const Request& req, Probes& probes, std::vector<Result>& out);
Result cc_check(Probes& probes);  // toolchain_checks.cpp
Result nvcc_check(Probes& probes);
Result python_check(const std::string& want, Probes& probes);
Result lib_check(const std::string& name, Probes& probes);  // library_checks.cpp
void elf_checks(const std::string& path, Probes& probes, std::vector<Result>& out);
Result disk_check(const DiskGate& gate);  // system_checks.cpp
Result port_check(const PortGate& gate);
Result file_check(const FileGate& gate);
Result rocm_check(Probes& probes);
Result gfx_check(const std::string& target, const Request& req, Probes& probes);  // --gfx TARGET
// The AMD GPUs the checks apply to: those ROCR_/HIP_VISIBLE_DEVICES leave the engine, narrowed to what
// --gpu names (an index among the KFD GPUs or a UUID); a hidden or unknown selector is a FAIL row in `out`.
std::vector<rocm::AmdGpu> selected_amd_gpus(const Request& req, Probes& probes, std::vector<Result>* out);
// With no NVIDIA GPU: --gpu (present, with name, target and memory) and --vram-free on the AMD GPUs.
void amd_gpu_checks(const Request& req, Probes& probes, std::vector<Result>& out);  // host/rocm_checks.cpp
// --vram-free on these AMD GPUs (amdgpu's mem_info_vram_*).
void amd_vram_checks(const Request& req, const std::vector<rocm::AmdGpu>& gpus, std::vector<Result>& out);
std::string amd_label(const rocm::AmdGpu& g);  // "AMD GPU node 1 (AMD Instinct MI300X, gfx942:sramecc+:xnack-)"
nlohmann::json amd_json(const rocm::AmdGpu& g);
// "ROCR_VISIBLE_DEVICES='1', HIP_VISIBLE_DEVICES='0'": the AMD visibility variables that are set.
std::string amd_visibility_text(const Environment& env);
// --kernels (host/kernel_checks.cpp): a summary row, then a row per library that carries GPU code.
void kernel_checks(const Request& req, Probes& probes, std::vector<Result>& out);
// --engine-args (host/fit_checks.cpp): the engine's command line planned on the engine's GPUs, from the
// model files it names on disk.
Result engine_fit_check(const Request& req, Probes& probes);
// The links (host/link_checks.cpp). `as_check`: a verdict was asked; without
// it (the inventory) a row only says what could be read.
void link_checks(const Request& req, Probes& probes, std::vector<Result>& out);
// The bus ids of the GPUs a measurement runs on: those CUDA_VISIBLE_DEVICES leaves the engine, narrowed by --gpu
// (empty: every GPU libcuda lists); nullopt when there is nothing to measure, with a FAIL row `row` in `out`
// where that is a failure ("CUDA_VISIBLE_DEVICES='' leaves the engine no GPU to PURPOSE").
std::optional<std::vector<std::string>> measured_bus_ids(const Request& req, Probes& probes, const std::string& row,
                                                         Rule rule, const std::string& purpose,
                                                         std::vector<Result>& out);
// --nccl-test (host/nccl_checks.cpp): the engine's libnccl, its all-reduce per size, transports, gates.
void nccl_checks(const Request& req, Probes& probes, std::vector<Result>& out);
void pcie_atomics_rows(Probes& probes, bool as_check, std::vector<Result>& out);
void roce_rows(const std::string& device, Probes& probes, bool as_check, std::vector<Result>& out);

}  // namespace provkit::host::detail
