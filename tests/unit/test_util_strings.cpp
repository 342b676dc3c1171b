// provkit::util strings: the one trim, lower, split and join.
#include <catch2/catch.hpp>

#include "provkit/util_strings.hpp"

using namespace provkit;

TEST_CASE("trim strips blanks (space, tab, CR, LF) at both ends only", "[util]") {
  CHECK(util::trim("  a b\t\r\n") == "a b");
  CHECK(util::trim("\r\n\t ") == "");
  CHECK(util::trim("") == "");
  CHECK(util::trim("\va\f") == "\va\f");  // not a blank of a text line
  std::string s = " x ";
  CHECK(util::trim_view(s).data() == s.data() + 1);  // a view into the input
}

TEST_CASE("lower and iequals are ASCII only", "[util]") {
  CHECK(util::lower("ABC-xyz_09") == "abc-xyz_09");
  CHECK(util::lower("\xC3\x84") == "\xC3\x84");
  CHECK(util::iequals("Content-Type", "content-TYPE"));
  CHECK_FALSE(util::iequals("rel", "rels"));
}

TEST_CASE("split keeps empty fields and join undoes it", "[util]") {
  CHECK(util::split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(util::split("", ',') == std::vector<std::string>{""});
  CHECK(util::split(",", ',') == std::vector<std::string>{"", ""});
  CHECK(util::join(util::split("x.y..z", '.'), '.') == "x.y..z");
}
