#include <catch2/catch.hpp>

#include <stdexcept>

#include "provkit/markers.hpp"

using provkit::py::evaluate_marker;

namespace {
const std::map<std::string, std::string> env = {
    {"python_version", "3.11"}, {"python_full_version", "3.11.7"}, {"sys_platform", "linux"},
    {"platform_machine", "x86_64"}, {"implementation_name", "cpython"}, {"os_name", "posix"},
    {"platform_python_implementation", "CPython"}, {"implementation_version", "3.11.7"},
    {"platform_system", "Linux"}, {"platform_release", "6.1"}, {"platform_version", "#1"}};
}

TEST_CASE("markers compare versions as versions and strings as strings", "[envbuild]") {
  CHECK(evaluate_marker("python_version >= '3.8'", env));
  CHECK(evaluate_marker("python_version > '3.9'", env));  // 3.11 > 3.9 as versions, not as text
  CHECK_FALSE(evaluate_marker("python_version < \"3.10\"", env));
  CHECK(evaluate_marker("python_full_version == '3.11.*'", env));
  CHECK(evaluate_marker("python_version ~= '3.9'", env));
  CHECK(evaluate_marker("sys_platform == 'linux' and platform_machine != 'aarch64'", env));
  CHECK(evaluate_marker("sys_platform == 'win32' or (os_name == 'posix' and implementation_name == 'cpython')", env));
  CHECK_FALSE(evaluate_marker("sys_platform == 'win32' or os_name == 'nt'", env));
  CHECK(evaluate_marker("'linux' in sys_platform", env));
  CHECK(evaluate_marker("platform_machine not in 'arm64 aarch64'", env));
  CHECK_FALSE(evaluate_marker("extra == 'test'", env));
}

TEST_CASE("malformed markers are refused", "[envbuild]") {
  CHECK_THROWS_AS(evaluate_marker("python_version >= ", env), std::invalid_argument);
  CHECK_THROWS_AS(evaluate_marker("nonsense_var == '1'", env), std::invalid_argument);
  CHECK_THROWS_AS(evaluate_marker("(python_version >= '3'", env), std::invalid_argument);
  CHECK_THROWS_AS(evaluate_marker("python_version >= '3' junk", env), std::invalid_argument);
}
