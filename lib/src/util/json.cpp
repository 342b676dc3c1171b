// The one reader of JSON from outside (json.hpp): the nesting is measured first, in one pass that skips
// strings, so nlohmann only ever sees a document of bounded depth.
#include "provkit/util/json.hpp"

namespace provkit::util {

// Scripts branch on invalid_input (docs/json.md); the sentence says which refusal.
std::string_view reason_name(JsonRefusal) { return reason_name(Reason::invalid_input); }

ExitCode exit_code(JsonRefusal) { return ExitCode::usage; }

namespace {

// The byte offset where the nesting first goes past `limit`; npos when it never does. Brackets inside
// strings do not count; text that is not JSON is measured all the same and then refused by the parser.
std::size_t too_deep_at(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::variant<nlohmann::json, JsonError> read_json(std::string_view text, const JsonLimits& limits) {
  if (auto at = too_deep_at(text, limits.depth); at != std::string_view::npos)
    return JsonError{JsonRefusal::too_deep, "arrays and objects nested deeper than " + std::to_string(limits.depth) +
                                                " levels (at byte " + std::to_string(at) + ")"};
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return JsonError{JsonRefusal::malformed, std::string("not JSON: ") + e.what()};
  }
}

nlohmann::json parse_untrusted(std::string_view text, const std::string& source, const JsonLimits& limits) {
  auto r = read_json(text, limits);
  if (auto* e = std::get_if<JsonError>(&r)) throw input_error(e->reason, source, 0, e->why);
  return std::move(std::get<nlohmann::json>(r));
}

}  // namespace provkit::util
