// envbuild verify DIR [--lock LOCK [--extra NAME]... [--group NAME]...] [--json]
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "provkit/python/env_verify.hpp"
#include "provkit/python/interpreter.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/python/venv.hpp"

namespace envbuild {

void add_verify(CLI::App& app, Globals& g, Run& run) {
  struct Args {
    std::string env, lock;
    std::vector<std::string> extras, groups;
    bool no_default_groups = false, json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("verify", "check every installed file against RECORD, and the set against a lock");
  cmd->add_option("DIR", args->env, "environment directory")->required();
  cmd->add_option("--lock", args->lock, "also compare the installed distributions with this lock");
  cmd->add_option("--extra", args->extras, "the pylock.toml extras the environment was created with (repeatable)");
  cmd->add_option("--group", args->groups, "the pylock.toml dependency groups it was created with (repeatable)");
  cmd->add_flag("--no-default-groups", args->no_default_groups, "it was created without the lock's default-groups");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args, &g, &run] {
    run = [args, &g] {
      using namespace provkit::python;
      VerifyReport report = verify_env(args->env, provkit::util::default_jobs());
      if (!args->lock.empty()) {
        Lock lock = read_lock(args->lock);
        // Markers are judged by the interpreter the environment was made from
        // (pyvenv.cfg's home), never by running a file inside it.
        Interpreter it = query_interpreter(base_interpreter(args->env), g.cache());
        std::vector<InstalledDist> installed = list_installed(report.site_packages);
        report.lock = compare_with_lock(installed, applicable_entries(lock, it.markers, {args->extras, args->groups, args->no_default_groups}));
      }
      if (args->json) {
        nlohmann::json j;
        j["environment"] = args->env;
        j["clean"] = report.clean();
        j["distributions"] = nlohmann::json::array();
        for (auto& d : report.dists)
          j["distributions"].push_back({{"name", d.name}, {"version", d.version}, {"clean", d.check.clean()},
                                        {"modified", d.check.modified}, {"missing", d.check.missing},
                                        {"unlisted", d.check.unlisted}, {"outside", d.check.outside}});
        if (report.lock) {
          nlohmann::json other = nlohmann::json::array();
          for (auto& v : report.lock->other_version)
            other.push_back({{"name", v.name}, {"installed", v.installed}, {"locked", v.locked}});
          j["lock"] = {{"file", args->lock}, {"missing", report.lock->missing}, {"extra", report.lock->extra},
                       {"other_version", other}};
        }
        std::cout << j.dump(2) << "\n";
      } else {
        for (auto& d : report.dists) {
          if (d.check.clean()) continue;
          std::cout << d.name << " " << d.version << ":\n";
          for (auto& p : d.check.modified) std::cout << "  modified  " << p << "\n";
          for (auto& p : d.check.missing) std::cout << "  missing   " << p << "\n";
          for (auto& p : d.check.unlisted) std::cout << "  unlisted  " << p << "\n";
          for (auto& p : d.check.outside) std::cout << "  outside   " << p << " (RECORD points outside the environment)\n";
        }
        if (report.lock) {
          for (auto& s : report.lock->missing) std::cout << "not installed (in lock): " << s << "\n";
          for (auto& s : report.lock->extra) std::cout << "not in lock (installed): " << s << "\n";
          for (auto& v : report.lock->other_version)
            std::cout << "other version: " << v.name << " " << v.installed << " installed, " << v.locked << " locked\n";
        }
        std::cout << args->env << (report.clean() ? " verifies clean" : " has drifted") << " ("
                  << report.dists.size() << " distributions)\n";
      }
      return report.clean() ? 0 : 1;
    };
  });
}

}  // namespace envbuild
