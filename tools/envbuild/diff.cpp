// envbuild diff A B [--json]
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "provkit/python/env_diff.hpp"

namespace envbuild {

void add_diff(CLI::App& app, Globals&, Run& run) {
  struct Args {
    std::string a, b;
    bool json = false, all = true;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("diff", "side-by-side version table of two environments or locks (exit 1 when they differ)");
  cmd->add_option("A", args->a, "environment or lock")->required();
  cmd->add_option("B", args->b, "environment or lock")->required();
  cmd->add_flag("--json", args->json, "print the table as JSON");
  cmd->callback([args, &run] {
    run = [args] {
      auto rows = provkit::python::diff_versions(provkit::python::read_versions(args->a), provkit::python::read_versions(args->b));
      int differing = 0;
      for (auto& r : rows) differing += r.differs;
      if (args->json) {
        nlohmann::json j = nlohmann::json::array();
        for (auto& r : rows)
          j.push_back({{"name", r.name}, {"a", r.a.empty() ? nlohmann::json() : nlohmann::json(r.a)},
                       {"b", r.b.empty() ? nlohmann::json() : nlohmann::json(r.b)}, {"differs", r.differs}});
        std::cout << nlohmann::json{{"a", args->a}, {"b", args->b}, {"packages", j}, {"differing", differing}}.dump(2)
                  << "\n";
      } else {
        std::size_t wn = 7, wa = args->a.size(), wb = args->b.size();
        for (auto& r : rows) wn = std::max(wn, r.name.size()), wa = std::max(wa, r.a.size()), wb = std::max(wb, r.b.size());
        auto line = [&](const std::string& mark, const std::string& n, const std::string& a, const std::string& b) {
          std::cout << mark << " " << std::left << std::setw(static_cast<int>(wn)) << n << "  "
                    << std::setw(static_cast<int>(wa)) << a << "  " << b << "\n";
        };
        line(" ", "package", args->a, args->b);
        for (auto& r : rows) line(r.differs ? "*" : " ", r.name, r.a.empty() ? "-" : r.a, r.b.empty() ? "-" : r.b);
        std::cout << differing << " of " << rows.size() << " differ\n";
      }
      return differing ? 1 : 0;
    };
  });
}

}  // namespace envbuild
