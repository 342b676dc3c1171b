#pragma once
// `hf-fetch mirror export`: the fleet mirror (lib mirror.hpp) from the command line.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "output.hpp"

namespace hffetch {

struct MirrorArgs {
  std::vector<std::string> manifests;
  std::string to;
  std::string cache_dir;
  CLI::App* export_cmd = nullptr;  // parsed() when this command was asked for
};

// Registers `mirror export` on `app`; --json/--quiet set the shared flags.
void add_mirror_command(CLI::App& app, MirrorArgs& args, bool& json, bool& quiet);
int run_mirror_export(const MirrorArgs& args, Reporter& out);

}  // namespace hffetch
