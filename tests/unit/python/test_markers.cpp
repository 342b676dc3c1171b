#include <catch2/catch.hpp>

#include <stdexcept>

#include "provkit/python/markers.hpp"

using provkit::python::evaluate_marker;

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

TEST_CASE("PEP 751 set variables: 'NAME' in extras / dependency_groups", "[envbuild][locks]") {
  using provkit::python::MarkerSets;
  MarkerSets sets{{"cli"}, {"dev", "default"}};
  CHECK(evaluate_marker("'cli' in extras", env, &sets));
  CHECK_FALSE(evaluate_marker("'docs' in extras", env, &sets));
  CHECK(evaluate_marker("'docs' not in extras", env, &sets));
  CHECK(evaluate_marker("\"dev\" in dependency_groups", env, &sets));
  CHECK(evaluate_marker("'Dev' in dependency_groups", env, &sets));  // names compare normalised
  CHECK_FALSE(evaluate_marker("'de' in dependency_groups", env, &sets));  // membership, not a substring
  // pdm's and uv's combined shapes.
  CHECK(evaluate_marker("python_version >= \"3.6\" and \"cli\" in extras", env, &sets));
  CHECK_FALSE(evaluate_marker("sys_platform == \"win32\" and \"cli\" in extras", env, &sets));
  CHECK(evaluate_marker("\"default\" in dependency_groups or \"security\" in extras", env, &sets));
  MarkerSets none;
  CHECK_FALSE(evaluate_marker("'cli' in extras", env, &none));
  // Outside a pylock, or used as a string, they are errors.
  CHECK_THROWS_WITH(evaluate_marker("'cli' in extras", env), Catch::Contains("pylock.toml"));
  CHECK_THROWS_AS(evaluate_marker("extras == 'cli'", env, &sets), std::invalid_argument);
  CHECK_FALSE(evaluate_marker("'cli' == extras", env, &sets));  // packaging: a string is never equal to a set
}

TEST_CASE("requires-python specifier sets", "[envbuild][locks]") {
  using provkit::python::version_matches;
  CHECK(version_matches("3.12.1", ">=3.12"));
  CHECK_FALSE(version_matches("3.12.1", ">=3.13"));
  CHECK(version_matches("3.12.1", ">=3.9, <3.14"));
  CHECK_FALSE(version_matches("3.14.0", ">=3.9,<3.14"));
  CHECK(version_matches("3.12.1", "== 3.12.*"));  // PEP 751's example writes '== 3.12' with a space
  CHECK_FALSE(version_matches("3.12.1", "== 3.12"));  // PEP 440: == 3.12 is 3.12.0
  CHECK(version_matches("3.12.1", "~=3.10"));
  CHECK(version_matches("3.12.1", "!=3.12.0"));
  CHECK(version_matches("3.12.1", ""));
  CHECK(version_matches("3.12.1", ">=3.9,"));  // packaging skips empty clauses
  CHECK_THROWS_AS(version_matches("3.12.1", "3.9"), std::invalid_argument);
  CHECK_THROWS_AS(version_matches("3.12.1", "=>3.9"), std::invalid_argument);
}
