#include "provkit/http/headers.hpp"

#include <algorithm>

#include "provkit/util/strings.hpp"

namespace provkit::http {

using util::iequals;
using util::parse_u64;
using util::trim_view;

std::optional<std::string> Headers::get(std::string_view name) const {
  // The last one given wins.
  auto it = std::find_if(items_.rbegin(), items_.rend(), [&](const auto& item) { return iequals(item.first, name); });
  if (it == items_.rend()) return std::nullopt;
  return it->second;
}

bool parse_header_line(std::string_view line, std::string& name, std::string& value) {
  line = trim_view(line);
  if (line.empty() || line.starts_with("HTTP/")) return false;
  auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  name = std::string(trim_view(line.substr(0, colon)));
  value = std::string(trim_view(line.substr(colon + 1)));
  return !name.empty();
}

std::optional<std::string> parse_link_next(std::string_view header) {
  std::size_t i = 0;
  while (i < header.size()) {
    auto open = header.find('<', i);
    if (open == std::string_view::npos) return std::nullopt;
    auto close = header.find('>', open);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view url = header.substr(open + 1, close - open - 1);
    // Parameters run to the next comma that is followed by another "<".
    auto next_link = header.find('<', close);
    std::string_view params = header.substr(close + 1, next_link == std::string_view::npos ? std::string_view::npos
                                                                                           : next_link - close - 1);
    std::size_t p = 0;
    while (p < params.size()) {
      auto semi = params.find(';', p);
      std::string_view param = trim_view(
          params.substr(p, semi == std::string_view::npos ? std::string_view::npos : semi - p));
      p = semi == std::string_view::npos ? params.size() : semi + 1;
      while (!param.empty() && param.back() == ',') param = trim_view(param.substr(0, param.size() - 1));
      auto eq = param.find('=');
      if (eq == std::string_view::npos || !iequals(trim_view(param.substr(0, eq)), "rel")) continue;
      std::string_view v = trim_view(param.substr(eq + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      // rel may hold several space-separated relation types.
      std::size_t t = 0;
      while (t < v.size()) {
        auto sp = v.find(' ', t);
        std::string_view tok = v.substr(t, sp == std::string_view::npos ? std::string_view::npos : sp - t);
        if (iequals(tok, "next")) return std::string(url);
        t = sp == std::string_view::npos ? v.size() : sp + 1;
      }
    }
    if (next_link == std::string_view::npos) break;
    i = next_link;
  }
  return std::nullopt;
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim_view(value);
  if (value.size() < 6 || !iequals(value.substr(0, 5), "bytes") || value[5] != ' ') return std::nullopt;
  value = trim_view(value.substr(6));
  auto dash = value.find('-');
  auto slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  ContentRange r;
  if (!parse_u64(trim_view(value.substr(0, dash)), r.first)) return std::nullopt;
  if (!parse_u64(trim_view(value.substr(dash + 1, slash - dash - 1)), r.last)) return std::nullopt;
  auto total = trim_view(value.substr(slash + 1));
  if (total != "*") {
    std::uint64_t t;
    if (!parse_u64(total, t)) return std::nullopt;
    r.total = t;
    if (r.last >= t) return std::nullopt;
  }
  if (r.last < r.first) return std::nullopt;
  return r;
}

bool is_safe_header_value(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

}  // namespace provkit::http
