// The seat map in envcheck's words: who holds each GPU's memory, as a clause of a
// sentence, as the fix that frees it, and as the `processes` array of the JSON rows.
#include "detail.hpp"
#include "provkit/util/size.hpp"

namespace provkit::host::detail {

namespace {

std::string ports_text(const ProcessFacts& f) {
  if (!f.ports_readable) return "its ports are another user's to read";
  if (f.ports.empty()) return "";
  std::string text = "listens on ";
  for (std::size_t i = 0; i < f.ports.size(); ++i) {
    const auto& s = f.ports[i];
    text += (i ? ", " : "") + (s.address.find(':') != std::string::npos ? "[" + s.address + "]" : s.address) + ":" +
            std::to_string(s.port);
  }
  return text;
}

std::string process_text(const gpu::GpuProcess& p) {
  std::string about = p.memory ? util::format_size(*p.memory) : "memory not reported";
  if (p.facts.unit) about += ", " + std::string(p.facts.unit->user ? "user unit " : "unit ") + p.facts.unit->name;
  if (p.facts.command.empty())  // gone since the driver listed it, or in another PID namespace (a container)
    return "PID " + std::to_string(p.pid) + " (" + about + "): not in this host's /proc (another PID namespace?)";
  if (auto ports = ports_text(p.facts); !ports.empty()) about += ", " + ports;
  return "PID " + std::to_string(p.pid) + " (" + about + "): " + p.facts.command;
}

}  // namespace

std::string seats_text(const std::vector<gpu::GpuProcess>& processes) {
  if (processes.empty()) return "";
  std::string text = "; its memory is held by ";
  for (std::size_t i = 0; i < processes.size(); ++i) text += (i ? "; " : "") + process_text(processes[i]);
  return text;
}

std::string seats_fix(const std::vector<gpu::GpuProcess>& processes) {
  std::string steps;
  for (const auto& p : processes) {
    auto step = p.facts.unit ? stop_command(*p.facts.unit) : "kill " + std::to_string(p.pid);
    if (steps.find(step) == std::string::npos) steps += (steps.empty() ? "" : "; ") + step;
  }
  return steps;
}

nlohmann::json seats_json(const std::vector<gpu::GpuProcess>& processes) {
  auto rows = nlohmann::json::array();
  for (const auto& p : processes) {
    auto ports = nlohmann::json::array();
    for (const auto& s : p.facts.ports) ports.push_back({{"port", s.port}, {"address", s.address}});
    rows.push_back({{"pid", p.pid},
                    {"memory", p.memory ? nlohmann::json(*p.memory) : nlohmann::json(nullptr)},
                    {"type", p.compute && p.graphics ? "compute+graphics"
                             : p.graphics            ? "graphics"
                                                     : "compute"},
                    {"command", p.facts.command},
                    {"unit", p.facts.unit ? nlohmann::json(p.facts.unit->name) : nlohmann::json(nullptr)},
                    {"user_unit", p.facts.unit && p.facts.unit->user},
                    {"stop", p.facts.unit ? nlohmann::json(stop_command(*p.facts.unit)) : nlohmann::json(nullptr)},
                    {"ports", p.facts.ports_readable ? ports : nlohmann::json(nullptr)},
                    {"gpu_instance", p.gpu_instance},
                    {"compute_instance", p.compute_instance}});
  }
  return rows;
}

}  // namespace provkit::host::detail
