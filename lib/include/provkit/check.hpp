#pragma once
// The result of one envcheck check (or one inventory fact) and its two
// renderings: the table people read and the JSON deploy scripts parse.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace provkit::check {

// info: an inventory fact, not a verdict. Only fail changes the exit code.
enum class Status { info, pass, warn, fail };

struct Result {
  std::string name;    // "cuda 13.0", "need fp8 gpu 1", "lib libcudart.so.13"
  Status status = Status::info;
  std::string reason;  // one plain sentence: what was found
  std::string fix;     // what to do about it; empty when nothing is known
  std::string rule;    // the rule the verdict applied, e.g. "minor-version-compatibility"
  nlohmann::json data = nlohmann::json::object();  // the facts behind it, for --json
};

std::string status_word(Status s);  // "PASS", "WARN", "FAIL", "INFO"

bool any_failed(const std::vector<Result>& results);

// A fixed-width table: STATUS, CHECK, RESULT columns; the fix on its own
// indented line under a row. Long reasons are not wrapped (grep-friendly).
std::string render_table(const std::vector<Result>& results);

// {"ok": bool, "checks": [{name, status, reason, fix, rule, data}...]}
nlohmann::json to_json(const std::vector<Result>& results);

}  // namespace provkit::check
