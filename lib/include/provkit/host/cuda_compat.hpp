#pragma once
// CUDA driver/runtime compatibility and GPU architecture rules, as pure
// functions over plain values (no driver calls here; see gpu.hpp for those).
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/host/check.hpp"

namespace provkit::host::cudacompat {

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

// Driver versions compare part by part numerically: "580.65.06" < "580.159.04".
// Returns <0, 0, >0; an unparsable version compares as all zeros.
int compare_driver_versions(std::string_view a, std::string_view b);

// The minimum Linux driver for a toolkit release (its first, GA build).
struct ReleaseMinimum {
  Version cuda;
  const char* driver;
  bool uncertain;  // taken from third-party copies of the table
};
// Where the table comes from, for messages and docs.
extern const char* const kReleaseTableSource;
const std::vector<ReleaseMinimum>& release_minimums();
std::optional<ReleaseMinimum> minimum_driver_for(Version cuda);

// The minor-version-compatibility floor of a major (11 -> 450.80.02,
// 12 -> 525.60.13, 13 -> 580.65.06): the driver of that major's .0 release.
std::optional<std::string> mvc_floor(int major);

// What the driver said: its version string and the CUDA version it supports
// (encoded, 0 when unknown).
struct DriverFacts {
  std::string driver_version;
  int cuda = 0;
};

struct Verdict {
  check::Status status = check::Status::fail;
  check::Rule rule =
      check::Rule::insufficient_driver;  // driver_supports_runtime, minor_version_compatibility or insufficient_driver
  std::string reason;
  std::string fix;
};

// Can a CUDA `asked` runtime run on this driver?
//  - pass when the driver's CUDA version >= asked;
//  - warn (fail with strict) when same major and the driver >= the major's MVC floor;
//  - fail otherwise, naming the minimum driver for `asked` when the table knows it.
Verdict judge_cuda(const DriverFacts& driver, Version asked, bool strict);

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

}  // namespace provkit::host::cudacompat
