#include <catch2/catch.hpp>

#include <algorithm>

#include "provkit/pyspec/wheel_tags.hpp"

using namespace provkit::pyspec;

namespace {
TagInputs cpython311(const std::string& glibc) {
  TagInputs it;
  it.implementation = "cpython";
  it.major = 3;
  it.minor = 11;
  it.machine = "x86_64";
  it.glibc = glibc;
  it.sys_platform = "linux";
  return it;
}
std::ptrdiff_t pos(const std::vector<std::string>& v, const std::string& t) {
  auto it = std::find(v.begin(), v.end(), t);
  return it == v.end() ? -1 : it - v.begin();
}
}  // namespace

TEST_CASE("tags run from the most specific to py3-none-any", "[envbuild]") {
  auto tags = compatible_tags(cpython311("2.36"));
  REQUIRE(!tags.empty());
  CHECK(tags.front() == "cp311-cp311-manylinux_2_36_x86_64");
  CHECK(pos(tags, "cp311-cp311-manylinux_2_17_x86_64") < pos(tags, "cp311-cp311-manylinux2014_x86_64"));
  CHECK(pos(tags, "cp311-cp311-manylinux1_x86_64") >= 0);
  CHECK(pos(tags, "cp311-cp311-linux_x86_64") > pos(tags, "cp311-cp311-manylinux1_x86_64"));
  CHECK(pos(tags, "cp311-cp311-linux_x86_64") < pos(tags, "cp311-abi3-manylinux_2_36_x86_64"));
  CHECK(pos(tags, "cp37-abi3-manylinux2014_x86_64") > pos(tags, "cp311-abi3-linux_x86_64"));
  CHECK(pos(tags, "cp311-none-manylinux_2_17_x86_64") > pos(tags, "cp32-abi3-linux_x86_64"));
  CHECK(pos(tags, "py3-none-any") > pos(tags, "cp311-none-any"));
  CHECK(pos(tags, "cp311-cp311-manylinux_2_37_x86_64") == -1);  // newer glibc than the host
  CHECK(pos(tags, "cp312-cp312-manylinux_2_17_x86_64") == -1);
  CHECK(pos(tags, "py2-none-any") == -1);
}

TEST_CASE("an older glibc accepts fewer manylinux tags; ranking picks the best wheel tag", "[envbuild]") {
  auto tags = compatible_tags(cpython311("2.17"));
  CHECK(tags.front() == "cp311-cp311-manylinux_2_17_x86_64");
  CHECK(pos(tags, "cp311-cp311-manylinux_2_28_x86_64") == -1);
  TagRanking ranking(tags);
  auto w = parse_wheel_name("numpy-1.26.0-cp311-cp311-manylinux_2_28_x86_64.whl");
  CHECK(ranking.rank(*w) == -1);
  auto w2 = parse_wheel_name("numpy-1.26.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  CHECK(ranking.rank(*w2) == 0);
  auto pure = parse_wheel_name("six-1.16.0-py2.py3-none-any.whl");
  CHECK(ranking.rank(*pure) > 0);
}
