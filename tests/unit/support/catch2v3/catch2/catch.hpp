#pragma once
// The unit tests are written against Catch2 v2's single header. Built with
// Catch2 v3 (Ubuntu 24.04, Debian 13), tests/CMakeLists.txt puts this folder
// first on the include path: v3's headers plus the v2 names the tests use.
// main() then comes from Catch2::Catch2WithMain (CATCH_CONFIG_MAIN is a v2 switch).
#include <catch2/catch_all.hpp>

#include <string>

namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& text, CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, cs);
}
using Matchers::StartsWith;
}  // namespace Catch

using Catch::Approx;
