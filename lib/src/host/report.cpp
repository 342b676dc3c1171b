// One envcheck run and its JSON (envcheck.hpp).
#include "provkit/host/envcheck.hpp"

#include "provkit/util/text.hpp"

namespace provkit::host {

Report run(const Request& request, const Environment& env) {
  Report r;
  r.inventory = !request.asks_anything() && request.gpus.empty();
  r.results = r.inventory ? inventory(env, request) : run_checks(request, env);
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
