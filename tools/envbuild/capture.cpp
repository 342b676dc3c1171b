// envbuild capture VENV --wheelhouse DIR --lock OUT
#include <iostream>

#include "commands.hpp"
#include "provkit/python/capture.hpp"
#include "provkit/python/lock.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/parallel.hpp"

namespace envbuild {

void add_capture(CLI::App& app, Globals&, Run& run) {
  struct Args {
    std::string source, wheelhouse, lock;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("capture", "pack an environment's distributions back into wheels and write a hashed lock");
  cmd->add_option("VENV", args->source, "environment, Python prefix, or site-packages directory")->required();
  cmd->add_option("--wheelhouse", args->wheelhouse, "directory for the wheels")->required();
  cmd->add_option("--lock", args->lock, "lock to write: pylock.toml (PEP 751) or a requirements file")->required();
  cmd->callback([args, &run] {
    run = [args] {
      namespace fs = std::filesystem;
      fs::path lock = args->lock;
      auto name = lock.filename().string();
      bool toml = name.size() > 5 && name.substr(name.size() - 5) == ".toml";
      // A pylock under another name is one create would refuse to read.
      if (toml && !provkit::python::is_pylock_name(lock))
        throw provkit::Error(provkit::ExitCode::usage, args->lock + ": a PEP 751 lock must be named pylock.toml or "
                                                                    "pylock.NAME.toml (NAME without dots)");
      fs::path lock_dir = fs::absolute(lock).parent_path();
      auto r = provkit::python::capture_env(args->source, args->wheelhouse, lock_dir, provkit::util::default_jobs());
      for (auto& w : r.warnings) warn(w);
      for (auto& s : r.skipped) warn("skipped " + s);
      std::string created_by = std::string("envbuild capture ") + PROVKIT_VERSION;
      provkit::util::write_file_atomic(lock, toml ? provkit::python::format_pylock(r.entries, created_by)
                                            : provkit::python::format_requirements(r.entries, "written by " + created_by +
                                                                                              " from " + args->source));
      std::cout << "captured " << r.entries.size() << " distributions into " << args->wheelhouse << "; lock "
                << args->lock << (r.skipped.empty() ? "" : " (" + std::to_string(r.skipped.size()) + " skipped)") << "\n";
      return 0;
    };
  });
}

}  // namespace envbuild
