#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "provkit/util/environment.hpp"

using namespace provkit;

TEST_CASE("environment: one table, every name once, each entry found by its variable and its name",
          "[util][environment]") {
  std::set<std::string_view> names;
  for (const auto& e : util::env_variables()) {
    CHECK(names.insert(e.name).second);
    CHECK(util::env_entry(e.variable).name == e.name);
    CHECK(util::env_by_name(e.name) == e.variable);
    CHECK(!e.meaning.empty());
  }
  CHECK(names.count("HF_TOKEN") == 1);
  CHECK_THROWS_AS(util::env_by_name("PROVKIT_NOT_A_VARIABLE"), std::logic_error);
}

TEST_CASE("environment: unset and set-but-empty are told apart", "[util][environment]") {
  ::unsetenv("HSA_XNACK");
  CHECK_FALSE(util::env_get(util::EnvVar::hsa_xnack).has_value());
  CHECK(util::env_value(util::EnvVar::hsa_xnack).empty());
  ::setenv("HSA_XNACK", "", 1);
  REQUIRE(util::env_get(util::EnvVar::hsa_xnack).has_value());
  CHECK(util::env_get(util::EnvVar::hsa_xnack)->empty());
  ::setenv("HSA_XNACK", "1", 1);
  CHECK(util::env_value(util::EnvVar::hsa_xnack) == "1");
  ::unsetenv("HSA_XNACK");
}

// docs/environment.md is what a user reads: its table rows are the code's table, row for row.
TEST_CASE("environment: docs/environment.md lists the table exactly", "[util][environment]") {
  std::ifstream doc(std::string(PROVKIT_TEST_DATA) + "/../../docs/environment.md");
  REQUIRE(doc);
  std::vector<std::string> documented;
  for (std::string line; std::getline(doc, line);)
    if (line.rfind("| `", 0) == 0) documented.push_back(line);
  std::vector<std::string> expected;
  for (const auto& e : util::env_variables()) {
    std::ostringstream row;
    row << "| `" << e.name << "` | " << e.read_by << " | " << e.meaning << " |";
    expected.push_back(row.str());
  }
  CHECK(documented == expected);
}
