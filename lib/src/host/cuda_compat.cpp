#include "provkit/host/cuda_compat.hpp"

#include <cctype>

#include "provkit/error.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::host::cudacompat {

namespace {

// At most 6 digits: a version part, never a number that needs more.
std::optional<int> parse_int(std::string_view s) {
  std::uint64_t v = 0;
  if (s.size() > 6 || !util::parse_u64(s, v)) return std::nullopt;
  return static_cast<int>(v);
}

std::vector<int> driver_parts(std::string_view v) {
  std::vector<int> parts;
  while (!v.empty()) {
    auto dot = v.find('.');
    auto part = parse_int(v.substr(0, dot));
    if (!part) return {};
    parts.push_back(*part);
    if (dot == std::string_view::npos) break;
    v.remove_prefix(dot + 1);
  }
  return parts;
}

}  // namespace

int compare_driver_versions(std::string_view a, std::string_view b) {
  auto pa = driver_parts(a), pb = driver_parts(b);
  for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    int x = i < pa.size() ? pa[i] : 0, y = i < pb.size() ? pb[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// Table 3, "CUDA Toolkit and Corresponding Driver Versions", of the CUDA
// Toolkit release notes (docs.nvidia.com/cuda/cuda-toolkit-release-notes/),
// minimum Linux x86_64 driver of each release's GA build; 13.1 onwards partly
// from third-party copies of that table (marked uncertain). There is no 12.7.
const char* const kReleaseTableSource =
    "CUDA Toolkit release notes, Table 3 (CUDA Toolkit and Corresponding Driver Versions)";

const std::vector<ReleaseMinimum>& release_minimums() {
  static const std::vector<ReleaseMinimum> table = {
      {{11, 0}, "450.80.02", false}, {{11, 1}, "455.23", false},    {{11, 2}, "460.27.03", false},
      {{11, 3}, "465.19.01", false}, {{11, 4}, "470.42.01", false}, {{11, 5}, "495.29.05", false},
      {{11, 6}, "510.39.01", false}, {{11, 7}, "515.43.04", false}, {{11, 8}, "520.61.05", false},
      {{12, 0}, "525.60.13", false}, {{12, 1}, "530.30.02", false}, {{12, 2}, "535.54.03", false},
      {{12, 3}, "545.23.06", false}, {{12, 4}, "550.54.14", false}, {{12, 5}, "555.42.02", false},
      {{12, 6}, "560.28.03", false}, {{12, 8}, "570.26", false},    {{12, 9}, "575.51.03", false},
      {{13, 0}, "580.65.06", false}, {{13, 1}, "590.44.01", false}, {{13, 2}, "595.45.04", true},
      {{13, 3}, "610.43.02", true},
  };
  return table;
}

std::optional<ReleaseMinimum> minimum_driver_for(gpucode::Version cuda) {
  for (const auto& r : release_minimums())
    if (r.cuda == cuda) return r;
  return std::nullopt;
}

std::optional<std::string> mvc_floor(int major) {
  if (major < 11) return std::nullopt;  // minor-version compatibility began with CUDA 11
  if (auto r = minimum_driver_for({major, 0})) return std::string(r->driver);
  return std::nullopt;
}

Verdict judge_cuda(const DriverFacts& driver, gpucode::Version asked, bool strict) {
  Verdict v;
  const gpucode::Version have = gpucode::from_cuda_int(driver.cuda);
  const std::string asked_s = "CUDA " + asked.str();
  const auto minimum = minimum_driver_for(asked);
  const std::string need_driver = minimum
                                      ? std::string("driver ") + minimum->driver + " or newer" +
                                            (minimum->uncertain ? " (table entry uncertain)" : "")
                                      : "a driver whose CUDA version is " + asked.str() +
                                            " or newer (the minimum for " + asked_s + " is not in envcheck's table)";
  const std::string fix_upgrade = "install NVIDIA " + need_driver + ", or use a build of the engine for CUDA " +
                                  have.str() + " or older";

  if (driver.cuda > 0 && have >= asked) {
    v.status = check::Status::pass;
    v.rule = check::Rule::driver_supports_runtime;
    v.reason = "driver " + driver.driver_version + " supports CUDA " + have.str() + " >= " + asked.str() +
               " (rule: a runtime no newer than the driver's CUDA version always works)";
    return v;
  }
  const auto floor = mvc_floor(asked.major);
  if (driver.cuda > 0 && have.major == asked.major && floor &&
      compare_driver_versions(driver.driver_version, *floor) >= 0) {
    v.status = strict ? check::Status::fail : check::Status::warn;
    v.rule = check::Rule::minor_version_compatibility;
    v.reason = "driver " + driver.driver_version + " supports CUDA " + have.str() + " < " + asked.str() + "; " +
               asked_s + " runs under minor-version compatibility (same major, driver >= " + *floor +
               "), but PTX compiled for " + asked.str() +
               " will not JIT (cudaErrorUnsupportedPtxVersion) and calls needing the newer driver fail "
               "(cudaErrorCallRequiresNewerDriver)";
    if (strict) v.hint = check::Hint::strict;
    v.fix = fix_upgrade + "; make sure the engine ships cubins for the GPU (nvcc -arch=sm_XY)";
    return v;
  }
  v.status = check::Status::fail;
  v.rule = check::Rule::insufficient_driver;
  v.reason = "driver " + driver.driver_version + " supports CUDA " + have.str() + ", older than " + asked_s +
             (minimum ? std::string(", which needs driver ") + minimum->driver + " (" + kReleaseTableSource + ")"
                      : " (the minimum driver for " + asked_s + " is not in envcheck's table)") +
             "; the runtime fails with cudaErrorInsufficientDriver";
  v.fix = fix_upgrade;
  return v;
}

}  // namespace provkit::host::cudacompat
