// envbuild: isolated Python environments built from a hashed lock.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "provkit/cli/convention.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"

namespace envbuild {

std::filesystem::path Globals::cache() const {
  if (!cache_dir.empty()) return cache_dir;
  if (auto env = provkit::util::getenv_str("ENVBUILD_CACHE_DIR"); !env.empty()) return env;
  return provkit::util::user_cache_dir() / "provkit" / "envbuild";
}

std::filesystem::path Globals::pythons() const {
  if (!python_dir.empty()) return python_dir;
  if (auto env = provkit::util::getenv_str("ENVBUILD_PYTHON_DIR"); !env.empty()) return env;
  auto data = provkit::util::getenv_str("XDG_DATA_HOME");
  if (data.empty()) data = provkit::util::getenv_str("HOME") + "/.local/share";
  return std::filesystem::path(data) / "provkit" / "pythons";
}

void warn(const std::string& message) { std::cerr << "envbuild: warning: " << message << "\n"; }

}  // namespace envbuild

int main(int argc, char** argv) {
  CLI::App app{"envbuild: build Python environments from a hashed lock, and prove later they have not drifted"};
  provkit::cli::Convention convention(app);
  app.set_version_flag("--version", std::string("envbuild ") + PROVKIT_VERSION);
  app.require_subcommand(1);
  envbuild::Globals globals;
  auto* cache_dir = app.add_option("--cache-dir", globals.cache_dir,
                                   "wheel cache (default $ENVBUILD_CACHE_DIR or ~/.cache/provkit/envbuild)");
  auto* python_dir = app.add_option("--python-dir", globals.python_dir,
                                    "managed interpreters (default $ENVBUILD_PYTHON_DIR or ~/.local/share/provkit/pythons)");
  envbuild::Run run;
  envbuild::add_create(app, globals, run);
  envbuild::add_verify(app, globals, run);
  envbuild::add_capture(app, globals, run);
  envbuild::add_diff(app, globals, run);
  envbuild::add_python(app, globals, run);
  // Which commands read the wheel cache and the managed interpreters (docs/envbuild.md, "Command line").
  const CLI::App* create = app.get_subcommand("create");
  const CLI::App* verify = app.get_subcommand("verify");
  const CLI::App* python_install = app.get_subcommand("python")->get_subcommand("install");
  const CLI::App* python_find = app.get_subcommand("python")->get_subcommand("find");
  convention.global(cache_dir, {create, verify, python_install});
  convention.global(python_dir, {create, python_install, python_find});
  if (auto stop = convention.parse(argc, argv)) return std::cout << stop->out, std::cerr << stop->err, stop->code;
  try {
    return run();
  } catch (const provkit::Error& e) {
    std::cerr << "envbuild: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "envbuild: " << e.what() << "\n";
    return static_cast<int>(provkit::ExitCode::check_failed);
  }
}
