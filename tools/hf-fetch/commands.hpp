#pragma once
// hf-fetch's subcommands; each returns the process exit code.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "output.hpp"

namespace hffetch {

struct CommonArgs {
  std::string endpoint;
  std::string token_file;
  int retries = 5;
  long connect_timeout_s = 10;  // huggingface_hub's own for its metadata requests (HF_HUB_ETAG_TIMEOUT)
  long stall_timeout_s = 60;
  provkit::http::Options http() const {
    provkit::http::Options o;
    o.retry.tries = retries;
    o.connect_timeout_s = connect_timeout_s;
    o.stall_timeout_s = stall_timeout_s;
    return o;
  }
};

struct FetchArgs {
  CommonArgs common;
  std::string manifest;
  std::string repo;                           // REPO[@REV], the positional form (instead of --manifest)
  std::string repo_type = "model";            // --repo-type
  std::vector<std::string> include, exclude;  // globs over the tree's paths (REPO form)
  std::vector<std::string> assemble;          // OUTPUT=PARTS|GLOB[:SHA256|:SHA256SUMS] (REPO form)
  std::string save_manifest;                  // write the manifest used here
  std::vector<std::string> mirrors;           // --mirror URL, tried in order before the endpoint
  bool dry_run = false;
  bool drop_parts = false;      // remove the parts of each verified assembly output
  bool progress_lines = false;  // --progress lines: a line on stderr every progress_interval_s
  long progress_interval_s = 10;
  std::string cache_dir;
  std::string local_dir;
  bool verify_only = false;
  bool check_upstream = false;
  int jobs = 4;                      // files at once
  int connections = 8;               // parallel ranges per large file
  std::uint64_t min_split_size = 0;  // SIZE, read with the command line (cli::size_value); 0: the library's default
  std::uint64_t max_rate = 0;        // bytes per second for the whole run, read likewise; 0: no cap
  bool offline = false;              // no network: files must be in place
  bool offline_from_env = false;     // offline because HF_HUB_OFFLINE is set, not --offline
};

struct CreateArgs {
  CommonArgs common;
  std::string repo;  // REPO[@REV]
  std::string type = "model";
  std::vector<std::string> include, exclude;
  std::vector<std::string> assemble;  // OUTPUT=PART,PART,...|GLOB[:SHA256|:SHA256SUMS]
  std::string output;                 // -o FILE, empty: stdout
};

// hf-fetch inspect (inspect_cmd.cpp).
struct InspectArgs {
  CommonArgs common;
  std::vector<std::string> targets;  // REPO[@REV], or paths on disk
  std::string manifest;
  std::vector<std::string> include, exclude;
  std::string gpus;  // N, or "local": this box's cards as the driver reads them (with --engine-args)
  unsigned tp = 0;
  std::string gpu_memory;   // SIZE, or SIZE,SIZE... (one per card) with --engine-args
  std::string engine_args;  // the engine's command line, planned by provkit::fit
  std::string print_field;  // --print FIELD: one field of the fit plan, the value alone
  int jobs = 16;            // headers read at once
  CLI::App* cmd = nullptr;
};
void add_inspect_command(CLI::App& app, InspectArgs& args);
int run_inspect(const InspectArgs& args, Output& out);

struct MirrorArgs {
  std::vector<std::string> manifests;  // the global --manifest, repeatable here
  std::string to;
  std::string cache_dir;           // the global --cache-dir
  CLI::App* export_cmd = nullptr;  // parsed() when this command was asked for
};

int run_fetch(const FetchArgs& args, Output& out);
int run_manifest_create(const CreateArgs& args, Output& out);
// The --assemble specs added to `m` (hub::parse_assembly), a refusal said as the flag's (manifest_create.cpp).
void add_assemblies(provkit::hub::Manifest& m, const std::vector<std::string>& specs, provkit::hub::HubClient& client);
// Registers `mirror export` and its own options on `app` (--manifest, --cache-dir, --json and --quiet are
// hf-fetch's global options).
void add_mirror_command(CLI::App& app, MirrorArgs& args);
int run_mirror_export(const MirrorArgs& args, Output& out);

}  // namespace hffetch
