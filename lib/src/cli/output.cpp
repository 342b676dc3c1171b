#include "provkit/cli/output.hpp"

#include <cstdlib>
#include <iostream>

#include "provkit/util/environment.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/text.hpp"

namespace provkit::cli {

std::string_view reason_name(Reason r) {
  switch (r) {
    case Reason::verification_failed: return "verification_failed";
    case Reason::differs: return "differs";
  }
  return "verification_failed";
}

ExitCode exit_code(Reason) { return ExitCode::check_failed; }

JsonLines::JsonLines(std::string tool, std::ostream* out) : tool_(std::move(tool)), out_(out ? *out : std::cout) {}

void JsonLines::line(const nlohmann::json& j) { out_ << util::json_dump(j) << '\n' << std::flush; }

void JsonLines::event(std::string_view kind, const nlohmann::json& fields) {
  nlohmann::json j = {{"event", kind}};
  if (fields.is_object())
    for (auto& [k, v] : fields.items())
      if (k != "event") j[k] = v;
  std::lock_guard lock(mutex_);
  if (!summarized_) line(j);
}

int JsonLines::summary(int exit_code, std::optional<ReasonId> reason, nlohmann::json fields,
                       const std::string& message) {
  if (!fields.is_object()) fields = nlohmann::json::object();
  fields["event"] = "summary";
  fields["tool"] = tool_;
  fields["exit_code"] = exit_code;
  if (exit_code != 0) fields["reason"] = reason ? reason->name() : reason_name(provkit::Reason::internal);
  else fields.erase("reason");
  // The domain's own refusal beside the shared reason it is given under (a manifest's: invalid_input).
  if (exit_code != 0 && reason && !reason->refusal().empty() && !fields.contains("detail"))
    fields["detail"] = {{"refusal", reason->refusal()}};
  if (!message.empty()) fields["message"] = message;
  std::lock_guard lock(mutex_);
  if (summarized_) return exit_code;
  summarized_ = true;
  line(fields);
  return exit_code;
}

int JsonLines::failure(const Error& e) {
  return summary(static_cast<int>(e.code()), e.reason(), nlohmann::json::object(), e.what());
}

bool wants_json(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i] ? argv[i] : "";
    if (a == "--") return false;
    if (a == "--json") return true;
  }
  return false;
}

int finish(const Stop& stop, std::string_view tool, bool json) {
  std::cout << stop.out << std::flush;
  std::cerr << stop.err << std::flush;
  if (json && stop.code != 0) {
    std::string message = stop.err;
    if (message.compare(0, tool.size() + 2, std::string(tool) + ": ") == 0) message.erase(0, tool.size() + 2);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    JsonLines(std::string(tool)).summary(stop.code, provkit::Reason::usage, nlohmann::json::object(), message);
  }
  return stop.code;
}

int last_resort(std::string_view tool, bool json, std::string_view what) {
  std::string message = "internal error: " + std::string(what);
  std::cerr << sentence(tool, message) << std::flush;
  int code = static_cast<int>(ExitCode::network);
  if (json) JsonLines(std::string(tool)).summary(code, provkit::Reason::internal, nlohmann::json::object(), message);
  return code;
}

bool start_trace(std::string_view tool, bool debug, std::ostream* err) {
  if (!debug && util::env_value(util::EnvVar::provkit_log) != "debug") return false;
  std::ostream& to = err ? *err : std::cerr;
  util::log::set_sink(
      [&to, prefix = std::string(tool) + ": debug: "](std::string_view domain, std::string_view message) {
        to << prefix << util::printable(domain) << ": " << util::printable(message) << '\n' << std::flush;
      });
  return true;
}

std::string sentence(std::string_view tool, std::string_view text) {
  return std::string(tool) + ": " + util::printable(text) + "\n";
}

}  // namespace provkit::cli
