#pragma once
// Text from outside (Hub, server, file, ELF, wheel, environment) on its way to a person or a script.
// Two escapes, each the one place its kind of output goes through:
// - printable(): for plain output. Valid UTF-8 stays as it is; controls (C0, DEL, C1, U+2028/U+2029) and format
//   characters (Cf: bidi controls such as U+202E, invisible ones; docs/json.md lists them) become \n, \r, \t or
//   \xNN per byte, as does each byte not part of valid UTF-8: no new line, cursor move, reordering or hidden char.
// - json_dump(): one line of JSON that never throws on a string's bytes. Valid UTF-8 is written as it is;
//   each byte that is not part of valid UTF-8 is written as the lone surrogate \udcNN (Python's
//   "surrogateescape", PEP 383): json.loads gives the str os.fsdecode would, and os.fsencode (or
//   .encode("utf-8", "surrogateescape")) gives the original bytes back (docs/json.md).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace provkit::util {

// The code point that starts at s[i], advancing i past it; -1 (and i past one byte) where the bytes there
// are not well-formed UTF-8. For callers that walk a string by characters (path rules, YAML quoting).
long next_code_point(std::string_view s, std::size_t& i);

std::string printable(std::string_view s);

// `s` as a JSON string literal, quotes included, escaped as above.
std::string json_string(std::string_view s);

// `j` as one line of JSON (no newline), every string and key through json_string.
std::string json_dump(const nlohmann::json& j);

}  // namespace provkit::util
