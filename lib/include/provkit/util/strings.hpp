#pragma once
// Small string helpers, one of each for the whole library.
// ASCII only: they read protocol text, file formats and command lines, never
// prose, so no locale takes part.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::util {

// The blanks a line of a text format may carry at its ends: space, tab, CR, LF.
inline constexpr std::string_view blank_chars = " \t\r\n";

// `s` without leading and trailing blank_chars (a view into `s`).
std::string_view trim_view(std::string_view s);
// The same, as a string of its own (safe to keep when `s` is a temporary).
std::string trim(std::string_view s);

// `s` with A-Z turned into a-z.
std::string lower(std::string_view s);
// Equal but for ASCII case.
bool iequals(std::string_view a, std::string_view b);

// Every field between `sep`s, empty ones included: "a,,b" gives {"a", "", "b"};
// "" gives {""}.
std::vector<std::string> split(std::string_view s, char sep);
// The inverse of split.
std::string join(const std::vector<std::string>& parts, char sep);
// The parts one after another, in one allocation: a message built of many pieces,
// where a chain of operator+ would copy it once per piece.
std::string concat(std::initializer_list<std::string_view> parts);

// A decimal number of at most 19 digits and nothing else (no sign, no blanks), as
// protocol fields write them; false leaves `out` alone.
bool parse_u64(std::string_view s, std::uint64_t& out);

// Each %XX (two hex digits) decoded to its byte; any other '%' kept as it is, as
// curl_easy_unescape does ("torch-2.6.0%2Bcpu" is "torch-2.6.0+cpu"). Here
// rather than in http so that the file formats that carry URLs need no HTTP.
std::string percent_decode(std::string_view s);

}  // namespace provkit::util
