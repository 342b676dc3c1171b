// pyspec/package: names normalised once, versions parsed once, compared as values.
#include <catch2/catch.hpp>

#include "provkit/pyspec/package.hpp"

using namespace provkit::pyspec;

TEST_CASE("package names and versions: normalised once, compared as values", "[pyspec][package]") {
  CHECK(PackageName("Foo.Bar_baz") == PackageName("foo-bar-baz"));
  CHECK(PackageName("Foo.Bar_baz").as_written() == "Foo.Bar_baz");
  CHECK(PackageVersion("1.0") == PackageVersion("1.0.0"));
  CHECK(PackageVersion("1.0RC1") == PackageVersion("1.0rc1"));
  CHECK(PackageVersion("1.0+local") != PackageVersion("1.0"));
  CHECK(PackageVersion("1.0").pep440().has_value());
  CHECK_FALSE(PackageVersion("not a version").pep440().has_value());
}

TEST_CASE("a wheel named from metadata: every part by its grammar, one file name or a refusal", "[pyspec][package]") {
  CHECK(make_wheel_filename("Foo.Bar_baz", "1.0", "py3-none-any") == "foo_bar_baz-1.0-py3-none-any.whl");
  CHECK(make_wheel_filename("demo", "v1.0-1", "py2.py3-none-any") == "demo-1.0.post1-py2.py3-none-any.whl");
  CHECK(make_wheel_filename("torch", "2.5.1+cu124", "cp312-cp312-linux_x86_64") ==
        "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl");
  CHECK(make_wheel_filename("x", "1!2.0rc1.dev3", "cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64") ==
        "x-1!2.0rc1.dev3-cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  using Catch::Contains;
  // Issue 41's two: a Version and a Name that were paths.
  CHECK_THROWS_WITH(make_wheel_filename("demo", "../../../escaped", "py3-none-any"), Contains("not a PEP 440 version"));
  CHECK_THROWS_WITH(make_wheel_filename("../../../../escapee", "1.0", "py3-none-any"),
                    Contains("not a distribution name"));
  for (const char* name : {"", "-demo", "demo-", "a/b", "/abs", "a b", "a;b", "a\x1b[2J", "ünicode", ".hidden"}) {
    INFO(name);
    CHECK_FALSE(is_distribution_name(name));
    CHECK_THROWS_AS(make_wheel_filename(name, "1.0", "py3-none-any"), provkit::Error);
  }
  for (const char* tag : {"py3-none-../../x", "py3-none", "py3-none-any-x", "py3-none-a/b", "py3..py2-none-any",
                          ".py3-none-any", "py3-none-", "py3-none-any\x1b"}) {
    INFO(tag);
    CHECK_FALSE(is_wheel_tag(tag));
    CHECK_THROWS_AS(make_wheel_filename("demo", "1.0", tag), provkit::Error);
  }
  for (const char* version : {"1.0/..", "1.0 ; x", ""}) {
    INFO(version);
    CHECK_THROWS_AS(make_wheel_filename("demo", version, "py3-none-any"), provkit::Error);
  }
  // Every grammar holds and the name is still too long to be a file name.
  CHECK_THROWS_WITH(make_wheel_filename(std::string(250, 'a'), "1.0", "py3-none-any"), Contains("longer than"));
}
