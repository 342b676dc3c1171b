#include <catch2/catch.hpp>

#include "provkit/pyspec/wheel_name.hpp"

using namespace provkit::pyspec;

TEST_CASE("project names normalise per PEP 503", "[envbuild]") {
  CHECK(normalize_name("Foo.Bar__baz") == "foo-bar-baz");
  CHECK(normalize_name("zope.interface") == "zope-interface");
  CHECK(dist_info_name("Typing-Extensions") == "typing_extensions");
}

TEST_CASE("wheel file names parse, with build tags and compressed tag sets", "[envbuild]") {
  auto w = parse_wheel_name("six-1.16.0-py2.py3-none-any.whl");
  REQUIRE(w);
  CHECK(w->name == "six");
  CHECK(w->version == "1.16.0");
  CHECK(w->tags() == std::vector<std::string>{"py2-none-any", "py3-none-any"});
  auto b = parse_wheel_name("torch-2.1.0-1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  REQUIRE(b);
  CHECK(b->build == "1");
  CHECK(b->platform_tags.size() == 2);
  CHECK_FALSE(parse_wheel_name("foo-1.0.tar.gz"));
  CHECK_FALSE(parse_wheel_name("foo-1.0-py3-none.whl"));
  CHECK_FALSE(parse_wheel_name("foo-1.0-x-py3-none-any.whl"));  // build tag must start with a digit
}

TEST_CASE("versions compare as PEP 440 orders them", "[envbuild]") {
  CHECK(same_version("1.0", "1.0.0"));
  CHECK(same_version("1.0RC1", "1.0rc1"));
  CHECK(compare_versions("1.0a1", "1.0") < 0);
  CHECK(compare_versions("1.0.dev1", "1.0a1") < 0);
  CHECK(compare_versions("1.0.post1", "1.0") > 0);
  CHECK(compare_versions("3.10", "3.9") > 0);
  CHECK(compare_versions("1!0.1", "2.0") > 0);
  CHECK_FALSE(same_version("2.0", "2.0.1"));
}
