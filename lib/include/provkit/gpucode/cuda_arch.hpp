#pragma once
// What CUDA code runs on which NVIDIA GPU, as pure functions over plain values: compute capabilities, the
// architectures code is built for (sm_90, sm_90a, sm_100f, compute_90), and the PTX ISA each toolkit introduced.
// No driver and no file here: the kernel readers (kernels) and envcheck's checks (host) both stand on it.
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::gpucode {

// A CUDA release or a compute capability: "13.0", "8.9".
struct Version {
  int major = 0;
  int minor = 0;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 reads the 0 of the defaulted <=>'s own comparison.
  auto operator<=>(const Version&) const = default;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// "X.Y" with small non-negative integers; nullopt otherwise.
std::optional<Version> parse_version(std::string_view text);
// cuDriverGetVersion / NVML encoding: 1000*major + 10*minor (13000 -> 13.0).
Version from_cuda_int(int encoded);

// One entry of a compiled architecture list: sm_90 (cubin), sm_90a
// (arch-specific cubin), sm_100f (family cubin), compute_90 (PTX); the
// TORCH_CUDA_ARCH_LIST spellings 8.6, 8.6+PTX, 9.0a are accepted too.
struct ArchTarget {
  Version arch;
  bool ptx = false;
  char variant = 0;  // 0, 'a' or 'f'
  std::string text;
};
std::optional<ArchTarget> parse_arch(std::string_view text);
// Comma or whitespace separated, brackets and quotes ignored (so a pasted
// "['sm_80', 'sm_90']" works). Throws provkit::Error(usage) on a bad entry.
std::vector<ArchTarget> parse_arch_list(std::string_view text);

// Does code built for `target` run on a GPU of compute capability `cc`?
// Cubins: same major, minor <= cc's ('a': exactly cc). PTX: any cc >= the
// target (JIT by the driver; 'a' PTX exactly cc).
bool runs_on(const ArchTarget& target, Version cc);
// The target the CUDA runtime runs on `cc`: the newest cubin that runs, else the newest PTX that does.
std::optional<ArchTarget> best_match(const std::vector<ArchTarget>& list, Version cc);

// Minimum compute capability for a named capability ("fp8" -> 8.9,
// "nvfp4" -> 10.0); nullopt for an unknown name.
std::optional<Version> capability_minimum(std::string_view need);

// The CUDA release that introduced a PTX ISA version ("9.0" -> 13.0, "8.8" -> 12.9); nullopt when unknown.
std::optional<Version> cuda_for_ptx_isa(const std::string& isa);

}  // namespace provkit::gpucode
