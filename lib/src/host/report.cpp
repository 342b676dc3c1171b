// One envcheck run and its JSON (envcheck.hpp).
#include "provkit/host/envcheck.hpp"

#include <algorithm>

#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"

namespace provkit::host {

Report run(const Request& request, const Environment& env) {
  Report r;
  r.inventory = !request.asks_anything() && request.gpus.empty();
  r.results = r.inventory ? inventory(env, request) : run_checks(request, env);
  // An advisory check (severity: warn) is run and shown as it is, and its failure does not fail the run. A
  // name that no check of this run has is a mistake the operator would not otherwise see.
  for (const auto& name : request.warn_only) {
    bool seen = false;
    for (auto& row : r.results) {
      if (row.name.substr(0, row.name.find(' ')) != name) continue;
      seen = true;
      row.advisory = true;
      if (row.status != check::Status::fail) continue;
      row.status = check::Status::warn;
      row.reason += " (severity warn: this failure does not fail the run)";
    }
    if (!seen && !r.inventory) {
      std::vector<std::string> names;
      for (const auto& row : r.results)
        if (auto word = row.name.substr(0, row.name.find(' '));
            std::find(names.begin(), names.end(), word) == names.end())
          names.push_back(word);
      throw InvalidValue(Field::severity, name + "=warn",
                         "a check this run has (its checks: " + (names.empty() ? "none" : util::join(names, ',')) +
                             ")");
    }
  }
  return r;
}

std::vector<std::string> field_values(const Report& report, const std::string& field) {
  std::vector<std::string> out;
  auto add = [&](const nlohmann::json& v) {
    if (v.is_null()) return;
    out.push_back(v.is_string() ? v.get<std::string>() : util::json_dump(v));  // never throws on a name's bytes
  };
  for (const auto& r : report.results) {
    if (!r.data.is_object() || !r.data.contains(field)) continue;
    const auto& v = r.data[field];
    if (v.is_array())
      for (const auto& e : v) add(e);
    else add(v);
  }
  return out;
}

nlohmann::json to_json(const Report& report) {
  auto j = check::to_json(report.results);
  j["envcheck"] = PROVKIT_VERSION;
  j["mode"] = report.inventory ? "inventory" : "checks";
  j["exit_code"] = report.failed() ? 1 : 0;
  return j;
}

}  // namespace provkit::host
