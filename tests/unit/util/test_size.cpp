#include <catch2/catch.hpp>

#include "provkit/error.hpp"
#include "provkit/util/size.hpp"

using namespace provkit;

TEST_CASE("SIZE parsing", "[util][size]") {
  CHECK(util::parse_size("500") == 500);
  CHECK(util::parse_size("24G") == 24ull << 30);
  CHECK(util::parse_size("24GiB") == 24ull << 30);
  CHECK(util::parse_size("24Gi") == 24ull << 30);
  CHECK(util::parse_size("80GB") == 80'000'000'000ull);
  CHECK(util::parse_size("1.5T") == (3ull << 40) / 2);
  CHECK(util::parse_size("512m") == 512ull << 20);
  CHECK(util::parse_size("10 MiB") == 10ull << 20);
  for (const char* bad : {"", "G", "12X", "1.2.3G", "-5G", ".5G", "5GG", "99999999999P"})
    CHECK_THROWS_AS(util::parse_size(bad), Error);
  try {  // hundreds of digits: std::stod's out_of_range must not leave the library
    util::parse_size(std::string(400, '9'));
    FAIL("taken");
  } catch (const Error& e) {
    CHECK(e.is(Reason::invalid_input));
  }
  CHECK(util::format_size(24ull << 30) == "24.0 GiB");
}
