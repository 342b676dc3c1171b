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
