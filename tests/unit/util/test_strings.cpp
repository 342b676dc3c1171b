// provkit::util strings: the one trim, lower, split, join and percent_decode.
#include <catch2/catch.hpp>

#include "provkit/util/strings.hpp"

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

TEST_CASE("concat puts its parts one after another, empty ones and NULs included", "[util]") {
  CHECK(util::concat({}).empty());
  CHECK(util::concat({"a", "", "bc"}) == "abc");
  std::string owned = "x";
  CHECK(util::concat({owned, std::string_view("\0y", 2), std::to_string(42)}) == std::string("x\0y42", 5));
}

TEST_CASE("parse_u64 takes plain decimal digits only, at most 19", "[util]") {
  std::uint64_t v = 7;
  CHECK(util::parse_u64("0", v));
  CHECK(v == 0);
  CHECK(util::parse_u64("9999999999999999999", v));
  CHECK(v == 9999999999999999999ull);
  v = 7;
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1.5", "0x10", "10000000000000000000"}) {
    CHECK_FALSE(util::parse_u64(bad, v));
    CHECK(v == 7);
  }
}

TEST_CASE("percent_decode decodes %XX and keeps any other '%', as curl_easy_unescape does", "[util]") {
  CHECK(util::percent_decode("torch-2.6.0%2Bcpu%zz%4") == "torch-2.6.0+cpu%zz%4");
  CHECK(util::percent_decode("%2b%2B%41") == "++A");
  CHECK(util::percent_decode("a%00b") == std::string("a\0b", 3));
  CHECK(util::percent_decode("%") == "%");
  CHECK(util::percent_decode("%4") == "%4");
  CHECK(util::percent_decode("+") == "+");
  CHECK(util::percent_decode("") == "");
}
