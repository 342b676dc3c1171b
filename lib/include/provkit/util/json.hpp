#pragma once
// JSON from outside (a checkpoint's config.json and hf_quant_config.json, Hub and index answers, cache
// entries, an interpreter's answer): every document goes through this one reader, which refuses nesting
// deeper than a limit before nlohmann builds the value. A 1 MB document nested 500,000 deep would otherwise
// be built, and then copied, compared and freed recursively, which ends in a stack overflow.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "provkit/error.hpp"

namespace provkit::util {

enum class JsonRefusal {
  malformed,  // not JSON
  too_deep,   // arrays and objects nested deeper than JsonLimits::depth
};
std::string_view reason_name(JsonRefusal r);  // invalid_input, as docs/json.md lists it
ExitCode exit_code(JsonRefusal r);            // usage (2): the input is wrong

struct JsonLimits {
  std::size_t depth = 100;  // configs and listings nest under 10 deep
};

struct JsonError {
  JsonRefusal reason = JsonRefusal::malformed;
  std::string why;  // "nested deeper than 100 levels (at byte 4096)", or the parser's sentence
};

// The document, or why it is refused. Never throws on the text.
std::variant<nlohmann::json, JsonError> read_json(std::string_view text, const JsonLimits& limits = {});

// The same for a file given as input: a refusal throws provkit::Error(JsonRefusal) reading "SOURCE: why".
nlohmann::json parse_untrusted(std::string_view text, const std::string& source, const JsonLimits& limits = {});

}  // namespace provkit::util
