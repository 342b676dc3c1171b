// envbuild create DIR --python PY --lock LOCK [--extra NAME]... [--group NAME]... [--find-links DIR]... ...
#include <chrono>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "provkit/python/env_create.hpp"

namespace envbuild {

void add_create(CLI::App& app, Globals& g, Run& run) {
  struct Args {
    std::string env, python, lock, link_mode = "clone";
    std::vector<std::string> find_links, index_urls, extras, groups;
    bool no_default_groups = false;
    bool allow_bad_record = false, compile = false, json = false;
    unsigned jobs = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("create", "create or update an environment so it matches a lock");
  cmd->add_option("DIR", args->env, "environment directory")->required();
  cmd->add_option("--python", args->python, "interpreter: a path, a command, or a version such as 3.12")->required();
  cmd->add_option("--lock", args->lock, "requirements file with --hash=sha256:..., or pylock.toml")->required();
  cmd->add_option("--extra", args->extras, "install this extra of a pylock.toml (repeatable; default none)");
  cmd->add_option("--group", args->groups,
                  "install this dependency group of a pylock.toml (repeatable; the lock's default-groups always)");
  cmd->add_flag("--no-default-groups", args->no_default_groups, "leave out the pylock.toml's default-groups");
  cmd->add_option("--find-links,-f", args->find_links, "directory of wheels (repeatable)");
  cmd->add_option("--index-url,-i", args->index_urls, "simple index URL (PEP 503/691; repeatable)");
  cmd->add_option("--link-mode", args->link_mode, "clone (reflink, falling back), hardlink, or copy");
  cmd->add_flag("--allow-bad-record", args->allow_bad_record, "install wheels whose RECORD does not match (warns)");
  cmd->add_flag("--compile", args->compile, "compile bytecode after installing");
  cmd->add_option("--jobs,-j", args->jobs, "parallel workers (default: 2x cores, 4..32)");
  cmd->add_flag("--json", args->json, "print the result as JSON");
  run = nullptr;
  cmd->callback([args, &g, &run] {
    run = [args, &g] {
      auto start = std::chrono::steady_clock::now();
      provkit::python::CreateOptions o;
      o.env = args->env;
      o.python = provkit::python::find_python(args->python, g.pythons());
      o.lock = args->lock;
      o.selection = {args->extras, args->groups, args->no_default_groups};
      for (auto& f : args->find_links) o.find_links.push_back(f);
      o.index_urls = args->index_urls;
      o.cache_dir = g.cache();
      o.link_mode = provkit::python::parse_link_mode(args->link_mode);
      o.allow_bad_record = args->allow_bad_record;
      o.compile = args->compile;
      o.jobs = args->jobs;
      auto r = provkit::python::create_env(o);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (auto& w : r.warnings) warn(w);
      if (args->json) {
        std::cout << nlohmann::json{{"environment", args->env}, {"installed", r.installed}, {"removed", r.removed},
                                    {"unchanged", r.unchanged}, {"warnings", r.warnings}, {"link_mode", r.link_mode},
                                    {"seconds", secs}}.dump(2)
                  << "\n";
      } else if (r.installed.empty() && r.removed.empty()) {
        std::cout << args->env << " already matches the lock (" << r.unchanged.size() << " distributions)\n";
      } else {
        for (auto& s : r.removed) std::cout << "- " << s << "\n";
        for (auto& s : r.installed) std::cout << "+ " << s << "\n";
        std::cout << args->env << ": " << r.installed.size() << " installed, " << r.removed.size() << " removed, "
                  << r.unchanged.size() << " unchanged in " << std::fixed << std::setprecision(2) << secs << " s"
                  << (r.link_mode.empty() ? "" : " (" + r.link_mode + ")") << "\n";
      }
      return 0;
    };
  });
}

}  // namespace envbuild
