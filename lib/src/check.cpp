#include "provkit/check.hpp"

#include <algorithm>

namespace provkit::check {

std::string status_word(Status s) {
  switch (s) {
    case Status::info: return "INFO";
    case Status::pass: return "PASS";
    case Status::warn: return "WARN";
    case Status::fail: return "FAIL";
  }
  return "?";
}

bool any_failed(const std::vector<Result>& results) {
  return std::any_of(results.begin(), results.end(), [](const Result& r) { return r.status == Status::fail; });
}

std::string render_table(const std::vector<Result>& results) {
  std::size_t name_width = 5;  // "CHECK"
  for (const auto& r : results) name_width = std::max(name_width, r.name.size());
  auto pad = [](std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
  };
  std::string out = pad("STATUS", 7) + pad("CHECK", name_width + 2) + "RESULT\n";
  for (const auto& r : results) {
    out += pad(status_word(r.status), 7) + pad(r.name, name_width + 2) + r.reason + "\n";
    if (!r.fix.empty()) out += pad("", 7 + name_width + 2) + "fix: " + r.fix + "\n";
  }
  return out;
}

nlohmann::json to_json(const std::vector<Result>& results) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& r : results) {
    checks.push_back({{"name", r.name},
                      {"status", status_word(r.status)},
                      {"reason", r.reason},
                      {"fix", r.fix},
                      {"rule", r.rule},
                      {"data", r.data}});
  }
  return {{"ok", !any_failed(results)}, {"checks", checks}};
}

}  // namespace provkit::check
