// envbuild python install ARCHIVE|URL --sha256 HEX ; envbuild python find SPEC
#include <iostream>

#include "commands.hpp"
#include "provkit/python/interpreter.hpp"
#include "provkit/python/interpreter_install.hpp"

namespace envbuild {

void add_python(CLI::App& app, Globals& g, Run& run) {
  struct Args {
    std::string source, sha256, spec;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("python", "manage standalone CPython builds");
  cmd->require_subcommand(1);
  auto* install = cmd->add_subcommand("install", "unpack a python-build-standalone archive (.tar.gz, .tar.zst) checked by sha256");
  install->add_option("ARCHIVE", args->source, "archive path or http(s) URL")->required();
  install->add_option("--sha256", args->sha256, "sha256 of the archive (hex)")->required();
  install->callback([args, &g, &run] {
    run = [args, &g] {
      auto r = provkit::python::install_python(args->source, args->sha256, g.pythons(), g.cache());
      std::cout << "Python " << r.version << (r.already ? " already installed at " : " installed at ") << r.dir.string()
                << "\n" << "use: --python " << r.version.substr(0, r.version.rfind('.')) << " (or " << r.python.string()
                << ")\n";
      return 0;
    };
  });
  auto* find = cmd->add_subcommand("find", "print the interpreter --python SPEC would use");
  find->add_option("SPEC", args->spec, "path, command or version such as 3.12")->required();
  find->callback([args, &g, &run] {
    run = [args, &g] {
      std::cout << provkit::python::find_python(args->spec, g.pythons()).string() << "\n";
      return 0;
    };
  });
}

}  // namespace envbuild
