// provkit::util yaml: one YAML document, errors as FILE:LINE.
#include <catch2/catch.hpp>

#include "provkit/error.hpp"
#include "provkit/util/yaml.hpp"

using namespace provkit;

TEST_CASE("load_single_yaml_document: one document, a second one refused at its line", "[util][yaml]") {
  auto node = util::load_single_yaml_document("repo: a/b\nfiles:\n  - x\n", "m.yaml");
  CHECK(node["repo"].as<std::string>() == "a/b");
  CHECK(util::yaml_line(node["files"]) == 3);
  try {
    util::load_single_yaml_document("a: 1\n---\nb: 2\n", "m.yaml");
    FAIL("two documents taken");
  } catch (const Error& e) {
    CHECK(e.is(Reason::invalid_input));
    CHECK(std::string(e.what()).starts_with("m.yaml:2"));
  }
  try {
    util::load_single_yaml_document("a: [1, 2\n", "m.yaml");
    FAIL("unclosed flow sequence taken");
  } catch (const Error& e) {
    CHECK(e.is(Reason::invalid_input));
  }
  // a lone "," once made LoadAll find documents without end
  CHECK_THROWS_AS(util::load_single_yaml_document(",", "m.yaml"), Error);
}
