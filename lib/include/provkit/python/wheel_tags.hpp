#pragma once
// Compatibility tags an interpreter accepts, most preferred first
// (cpXY-cpXY-plat, abi3, none, pyXY, then -any; manylinux against host glibc).
#include <string>
#include <unordered_map>
#include <vector>

#include "provkit/python/interpreter.hpp"
#include "provkit/python/wheel_name.hpp"

namespace provkit::python {

std::vector<std::string> compatible_tags(const Interpreter& it);

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

}  // namespace provkit::python
