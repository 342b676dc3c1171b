#pragma once
// Which code in a library runs on a GPU, as envcheck's --kernels check judges it: a PASS, WARN or FAIL with the
// image it rests on. The images come from the kernel readers (kernels), the rules from gpucode.
#include <optional>
#include <string>

#include "provkit/gpucode/cuda_arch.hpp"
#include "provkit/host/check.hpp"
#include "provkit/kernels/listing.hpp"

namespace provkit::host::code_verdict {

// The GPU a verdict is for.
struct Gpu {
  std::string label;                   // "GPU 0 (NVIDIA H200, 9.0)"
  std::optional<gpucode::Version> cc;  // NVIDIA
  std::string gfx;                     // AMD: "gfx90a"
  // AMD: the modes a code object's features must match (rocm::AmdGpu's: the
  // engine's XNACK mode, the board's SRAM ECC); nullopt: absent or not known.
  std::optional<bool> xnack, sramecc;
};

// PASS: a cubin (or code object) runs on it; WARN: only PTX, which the driver
// JIT-compiles at first start, or only code objects whose xnack/sramecc
// feature the GPU's mode cannot be told for; FAIL: nothing runs (a code
// object built for the other mode of a feature does not load: clang's target
// id rules, gpucode::match_target); INFO: the library carries nothing for this
// vendor's GPUs.
struct Verdict {
  check::Status status = check::Status::info;
  std::string via;     // "sm_90", "compute_90 (PTX ISA 9.0)", "gfx90a:xnack-"
  std::string reason;  // one clause: "runs sm_90 cubins", ...
};
// `driver_cuda`: the driver's CUDA version (1000*major + 10*minor), 0 when
// unknown; PTX whose ISA needs a newer driver is not counted as running.
Verdict judge(const kernels::Library& library, const Gpu& gpu, int driver_cuda);

// A loadable cubin (not relocatable) that runs on NVIDIA `gpu`: what a PASS rests on.
bool cubin_runs_on(const kernels::Image& image, const Gpu& gpu);

}  // namespace provkit::host::code_verdict
