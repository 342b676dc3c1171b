#pragma once
// CUDA driver/runtime compatibility (which driver runs which toolkit), as pure
// functions over plain values (no driver calls here; see gpu.hpp for those).
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/gpucode/cuda_arch.hpp"
#include "provkit/host/check.hpp"

namespace provkit::host::cudacompat {

// Driver versions compare part by part numerically: "580.65.06" < "580.159.04".
// Returns <0, 0, >0; an unparsable version compares as all zeros.
int compare_driver_versions(std::string_view a, std::string_view b);

// The minimum Linux driver for a toolkit release (its first, GA build).
struct ReleaseMinimum {
  gpucode::Version cuda;
  const char* driver;
  bool uncertain;  // taken from third-party copies of the table
};
// Where the table comes from, for messages and docs.
extern const char* const kReleaseTableSource;
const std::vector<ReleaseMinimum>& release_minimums();
std::optional<ReleaseMinimum> minimum_driver_for(gpucode::Version cuda);

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
  check::Hint hint = check::Hint::none;  // strict: the strict setting made this WARN a FAIL (a tool says how)
};

// Can a CUDA `asked` runtime run on this driver?
//  - pass when the driver's CUDA version >= asked;
//  - warn (fail with strict) when same major and the driver >= the major's MVC floor;
//  - fail otherwise, naming the minimum driver for `asked` when the table knows it.
Verdict judge_cuda(const DriverFacts& driver, gpucode::Version asked, bool strict);

}  // namespace provkit::host::cudacompat
