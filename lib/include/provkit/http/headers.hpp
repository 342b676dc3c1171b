#pragma once
// HTTP header values: case-insensitive header lists, raw header lines, Link
// (rel="next") and Content-Range. Pure functions, fuzzed (fuzz_http_headers).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace provkit::http {

// Response or request headers, in order; lookups ignore case.
class Headers {
 public:
  void add(std::string name, std::string value) { items_.emplace_back(std::move(name), std::move(value)); }
  // The last value of that header, if present.
  std::optional<std::string> get(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  void clear() { items_.clear(); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// Parses one raw header line as curl hands it over ("Name: value\r\n").
// Returns false for the status line, blank lines and lines without a colon.
bool parse_header_line(std::string_view line, std::string& name, std::string& value);

// The URL of rel="next" in a Link header (RFC 8288), if any.
std::optional<std::string> parse_link_next(std::string_view link_header);

// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*": total = nullopt).
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

// Header values (and bearer tokens) with CR, LF or NUL would let text end a
// header line and start another: Session::add refuses them (provkit::Error, usage).
bool is_safe_header_value(std::string_view value);

}  // namespace provkit::http
