// util::read_json / parse_untrusted: the one reader of JSON from outside, with its nesting bounded.
#include <catch2/catch.hpp>

#include "provkit/error.hpp"
#include "provkit/util/json.hpp"

using namespace provkit;

TEST_CASE("json: a document nested 500,000 deep is refused before it is built", "[json]") {
  const std::string deep = std::string(500000, '[') + std::string(500000, ']');
  auto r = util::read_json(deep);
  REQUIRE(std::holds_alternative<util::JsonError>(r));
  CHECK(std::get<util::JsonError>(r).reason == util::JsonRefusal::too_deep);
  CHECK(std::get<util::JsonError>(r).why.find("at byte 100") != std::string::npos);
  // Objects count as arrays do; brackets inside strings do not count.
  std::string objects;
  for (int i = 0; i < 101; ++i) objects += "{\"a\":";
  objects += "1" + std::string(101, '}');
  CHECK(std::holds_alternative<util::JsonError>(util::read_json(objects)));
  const std::string in_string = "{\"x\": \"" + std::string(5000, '[') + "\\\"[\"}";
  auto s = util::read_json(in_string);
  REQUIRE(std::holds_alternative<nlohmann::json>(s));
  CHECK(std::get<nlohmann::json>(s)["x"].get<std::string>().size() == 5002);
  // At the limit it parses; one more is refused.
  CHECK(std::holds_alternative<nlohmann::json>(util::read_json(std::string(100, '[') + std::string(100, ']'))));
  CHECK(std::holds_alternative<util::JsonError>(util::read_json(std::string(101, '[') + std::string(101, ']'))));
}

TEST_CASE("json: parse_untrusted names the file in a typed refusal", "[json]") {
  try {
    util::parse_untrusted(std::string(1000, '{'), "hf_quant_config.json");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.is(util::JsonRefusal::too_deep));
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).rfind("hf_quant_config.json: ", 0) == 0);
  }
  try {
    util::parse_untrusted("{\"a\": ", "config.json");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.is(util::JsonRefusal::malformed));
    CHECK(std::string(e.what()).rfind("config.json: not JSON", 0) == 0);
  }
  CHECK(util::parse_untrusted(R"({"a": [1, {"b": null}]})", "x.json")["a"][1].contains("b"));
}
