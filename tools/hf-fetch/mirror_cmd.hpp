#pragma once
// `hf-fetch mirror export`: the fleet mirror (lib mirror.hpp) from the command line.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "output.hpp"

namespace hffetch {

struct MirrorArgs {
  std::vector<std::string> manifests;  // the global --manifest, repeatable here
  std::string to;
  std::string cache_dir;               // the global --cache-dir
  CLI::App* export_cmd = nullptr;  // parsed() when this command was asked for
};

// Registers `mirror export` and its own options on `app` (--manifest, --cache-dir, --json and --quiet are
// hf-fetch's global options).
void add_mirror_command(CLI::App& app, MirrorArgs& args);
int run_mirror_export(const MirrorArgs& args, Output& out);

}  // namespace hffetch
