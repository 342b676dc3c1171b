// envbuild: isolated Python environments built from a hashed lock.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "provkit/error.hpp"
#include "provkit/fsutil.hpp"

namespace envbuild {

std::filesystem::path Globals::cache() const {
  if (!cache_dir.empty()) return cache_dir;
  if (auto env = provkit::getenv_str("ENVBUILD_CACHE_DIR"); !env.empty()) return env;
  return provkit::user_cache_dir() / "provkit" / "envbuild";
}

std::filesystem::path Globals::pythons() const {
  if (!python_dir.empty()) return python_dir;
  if (auto env = provkit::getenv_str("ENVBUILD_PYTHON_DIR"); !env.empty()) return env;
  auto data = provkit::getenv_str("XDG_DATA_HOME");
  if (data.empty()) data = provkit::getenv_str("HOME") + "/.local/share";
  return std::filesystem::path(data) / "provkit" / "pythons";
}

void warn(const std::string& message) { std::cerr << "envbuild: warning: " << message << "\n"; }

}  // namespace envbuild

int main(int argc, char** argv) {
  CLI::App app{"envbuild: build Python environments from a hashed lock, and prove later they have not drifted"};
  app.set_version_flag("--version", std::string("envbuild ") + PROVKIT_VERSION);
  app.require_subcommand(1);
  envbuild::Globals globals;
  app.add_option("--cache-dir", globals.cache_dir, "wheel cache (default $ENVBUILD_CACHE_DIR or ~/.cache/provkit/envbuild)");
  app.add_option("--python-dir", globals.python_dir,
                 "managed interpreters (default $ENVBUILD_PYTHON_DIR or ~/.local/share/provkit/pythons)");
  envbuild::Run run;
  envbuild::add_create(app, globals, run);
  envbuild::add_verify(app, globals, run);
  envbuild::add_capture(app, globals, run);
  envbuild::add_diff(app, globals, run);
  envbuild::add_python(app, globals, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(provkit::ExitCode::usage);
  }
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
