#pragma once
// Compatibility tags an interpreter accepts, most preferred first
// (cpXY-cpXY-plat, abi3, none, pyXY, then -any; manylinux against host glibc).
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "provkit/pyspec/wheel_name.hpp"

namespace provkit::pyspec {

// What of an interpreter the tags depend on (pyenv::tag_inputs fills it from an Interpreter's facts).
struct TagInputs {
  std::string implementation;  // sys.implementation.name, "cpython"
  int major = 0, minor = 0;
  std::string abiflags;  // sys.abiflags ("" or "t" for free-threaded)
  std::string machine;   // platform.machine(), "x86_64"
  std::string glibc;     // "2.36", empty when not glibc
  bool is_64bit = true;
  std::optional<std::string> sys_platform;  // the sys_platform marker; not known counts as "linux"
};

std::vector<std::string> compatible_tags(const TagInputs& it);

// Tag -> priority (0 best) for quick ranking of wheels.
class TagRanking {
 public:
  explicit TagRanking(std::vector<std::string> tags);
  // Best (lowest) priority among the wheel's tags; -1 when incompatible.
  int rank(const WheelName& wheel) const;
  const std::vector<std::string>& tags() const { return tags_; }

 private:
  std::vector<std::string> tags_;
  std::unordered_map<std::string, int> priority_;
};

}  // namespace provkit::pyspec
