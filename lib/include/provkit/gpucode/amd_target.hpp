#pragma once
// What AMD code runs on which AMD GPU: LLVM's target ids ("gfx90a:sramecc+:xnack-", "gfx11-generic") against a
// processor and the modes it runs in, as clang and the ROCm loader decide it. Pure: the GPU's facts come from
// host::rocm, the code objects from kernels.
#include <optional>
#include <string>

namespace provkit::gpucode {

// A GPU as code objects see it: its processor and its modes (nullopt: the processor has no such feature, or the
// mode cannot be told).
struct AmdProcessor {
  std::string gfx_target;  // "gfx942"
  std::optional<bool> sramecc, xnack;
};

// Does a code object for `target_id` ("gfx90a:xnack-", "gfx11-generic") load on processor `gfx` ("gfx90a")?
bool code_object_runs_on(const std::string& target_id, const std::string& gfx);

// Does the processor have the feature at all (LLVM's processor table)?
bool has_xnack(const std::string& gfx);
bool has_sramecc(const std::string& gfx);

// Does code built for `target_id` ("gfx90a:xnack-", "gfx942", "gfx9-4-generic:sramecc+") load on `gpu`?
// The processor as code_object_runs_on decides it, then every feature the target sets
// (`+`/`-`) must equal the GPU's mode; a feature left out runs in either mode.
struct TargetMatch {
  enum class Verdict { loads, wrong_processor, wrong_mode, unknown_mode } verdict = Verdict::loads;
  std::string why;  // for anything but loads: "xnack+ code on a GPU running xnack-", ...
};
TargetMatch match_target(const std::string& target_id, const AmdProcessor& gpu);

}  // namespace provkit::gpucode
