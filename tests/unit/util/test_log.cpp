#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "provkit/util/log.hpp"

using namespace provkit::util;

TEST_CASE("log: lines reach the installed sink; with none, nothing is built", "[util][log]") {
  int built = 0;
  auto message = [&] {
    ++built;
    return std::string("range 0-99");
  };
  log::set_sink({});
  log::debug("download", message);
  CHECK(built == 0);
  CHECK_FALSE(log::enabled());

  std::vector<std::string> lines;
  log::set_sink([&](std::string_view domain, std::string_view text) {
    lines.push_back(std::string(domain) + ": " + std::string(text));
  });
  CHECK(log::enabled());
  log::debug("download", message);
  log::debug("hub", "resolved main");
  log::set_sink({});
  log::debug("hub", "after");
  CHECK(built == 1);
  CHECK(lines == std::vector<std::string>{"download: range 0-99", "hub: resolved main"});
}
