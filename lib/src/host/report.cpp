// One envcheck run and its JSON (envcheck.hpp).
#include "provkit/host/envcheck.hpp"

namespace provkit::host {

Report run(const Request& request, const Environment& env) {
  Report r;
  r.inventory = !request.asks_anything() && request.gpus.empty();
  r.results = r.inventory ? inventory(env, request) : run_checks(request, env);
  return r;
}

nlohmann::json to_json(const Report& report) {
  auto j = check::to_json(report.results);
  j["envcheck"] = PROVKIT_VERSION;
  j["mode"] = report.inventory ? "inventory" : "checks";
  j["exit_code"] = report.failed() ? 1 : 0;
  return j;
}

}  // namespace provkit::host
