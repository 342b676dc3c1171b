#pragma once
// Each subcommand registers its flags on the app and sets `run`, which the
// main calls after parsing. provkit::Error thrown by run becomes one sentence
// on stderr and its exit code.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

namespace envbuild {

using Run = std::function<int()>;

struct Globals {
  std::string cache_dir;   // --cache-dir / ENVBUILD_CACHE_DIR
  std::string python_dir;  // --python-dir / ENVBUILD_PYTHON_DIR
  std::filesystem::path cache() const;
  std::filesystem::path pythons() const;
};

void add_create(CLI::App& app, Globals& g, Run& run);
void add_verify(CLI::App& app, Globals& g, Run& run);
void add_capture(CLI::App& app, Globals& g, Run& run);
void add_diff(CLI::App& app, Globals& g, Run& run);
void add_python(CLI::App& app, Globals& g, Run& run);

// "envbuild: warning: ..." on stderr.
void warn(const std::string& message);

}  // namespace envbuild
