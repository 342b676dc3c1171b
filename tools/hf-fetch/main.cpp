// hf-fetch: pinned, sha256-verified, resumable Hub checkpoint fetch.
// Parses flags, runs a subcommand, turns provkit::Error into one sentence
// and the shared exit codes (README.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "provkit/cli/convention.hpp"
#include "provkit/cli/output.hpp"
#include "provkit/error.hpp"
#include "provkit/hub/client.hpp"

namespace {

// The flag that would give a token, said after the library's sentence when the Hub refused for want of one
// (a gated or private repository) and none was found.
provkit::Error with_token_hint(const provkit::Error& e, const std::string& token_file) {
  using provkit::hub::HubRefusal;
  if (!e.is(HubRefusal::gated) && !e.is(HubRefusal::not_found_or_private)) return e;
  try {
    if (!provkit::hub::find_token(token_file).value.empty()) return e;  // the sentence names the token tried
  } catch (const provkit::Error&) {
    return e;
  }
  return provkit::Error(e, std::string(e.what()) + "; or give one in a file with --token-file FILE");
}

int run(int argc, char** argv) {
  CLI::App app{"hf-fetch: fetch Hugging Face Hub files pinned to a commit, sha256-verified and resumable"};
  provkit::cli::Convention convention(app, "--manifest FILE");
  app.set_version_flag("--version", std::string("hf-fetch ") + PROVKIT_VERSION);
  app.require_subcommand(0, 1);

  hffetch::FetchArgs fetch;
  hffetch::CommonArgs common;
  std::vector<std::string> manifests;
  bool json = false, quiet = false;
  app.add_option("repo", fetch.repo,
                 "REPO[@REVISION] (default revision main): fetch from the Hub's tree at that revision, "
                 "as `hf download REPO --revision REV` does (instead of --manifest)");
  app.add_option("--include", fetch.include,
                 "with REPO: only paths matching this glob (repeatable; as hf download: fnmatch, '*' crosses '/', "
                 "'dir/' is 'dir/*')");
  app.add_option("--exclude", fetch.exclude, "with REPO: leave out paths matching this glob (repeatable)");
  app.add_option("--assemble", fetch.assemble,
                 "with REPO: OUTPUT=PART,PART,... or OUTPUT=GLOB (natural order), then :SHA256 or :SHA256SUMS (the "
                 "repo's own file) for the whole output's checksum (repeatable)");
  app.add_option("--mirror", fetch.mirrors,
                 "a mirror (hf-fetch mirror export behind nginx) tried before --endpoint (repeatable, in order); "
                 "one that refuses or is down is left at once, a file it serves wrong is fetched from the next; "
                 "never sent the token");
  app.add_option("--repo-type", fetch.repo_type, "with REPO: model, dataset or space (default model)");
  app.add_option("--save-manifest", fetch.save_manifest,
                 "write the manifest this fetch used (pinned to the commit) to FILE, for --manifest next time");
  app.add_flag("--dry-run", fetch.dry_run,
               "list what would be fetched, resumed or is in place, the bytes and the free space; download nothing");
  app.add_flag("--drop-parts", fetch.drop_parts,
               "once an assembly output verifies against its sha256, remove the parts it was made from (the "
               "disk gate counts the peak: the files plus one output before its parts go); parts dropped "
               "earlier count as in place while their output verifies");
  std::string progress;
  app.add_option("--progress", progress,
                 "bar (a live line on a terminal), lines (a line on stderr every --progress-interval seconds: "
                 "files, bytes, rate, ETA) or none; default bar on a terminal, lines otherwise")
      ->check(CLI::IsMember({"bar", "lines", "none"}));
  app.add_option("--progress-interval", fetch.progress_interval_s,
                 "seconds between progress lines (default 10, as aria2c's summary interval)")
      ->check(CLI::Range(1, 3600));
  auto* manifest = app.add_option("--manifest", manifests,
                                  "the manifest (YAML) naming the repo, commit and files (mirror export: repeatable)");
  auto* cache = app.add_option("--cache-dir", fetch.cache_dir,
                               "Hugging Face cache to fill or export from (default: $HF_HUB_CACHE, else $HF_HOME/hub)");
  app.add_option("--local-dir", fetch.local_dir, "write a plain tree here instead of the cache")->excludes(cache);
  auto* verify = app.add_flag("--verify-only", fetch.verify_only,
                              "check the files on disk against the manifest; no network");
  auto* check_upstream = app.add_flag("--check-upstream", fetch.check_upstream,
                                      "compare the manifest with the Hub's tree; download nothing")
                             ->excludes(verify);
  app.add_flag("--offline", fetch.offline,
               "no network at all: every file must already be in place and verify; then publish and assemble as "
               "usual (also when HF_HUB_OFFLINE=1 is set)")
      ->excludes(check_upstream);
  auto* json_flag = app.add_flag("--json", json, "JSON lines: one event per line and a final summary");
  auto* quiet_flag = app.add_flag("--quiet", quiet, "print only problems");
  bool debug = false;
  auto* debug_flag =
      app.add_flag("--debug", debug,
                   "trace each request, engine and ramp step and file written, on stderr (also PROVKIT_LOG=debug)");
  auto* jobs = app.add_option("--jobs", fetch.jobs,
                              "files downloaded at once (default 4; inspect: headers read at once, default 16)")
                   ->check(CLI::Range(1, 64));
  app.add_option("--connections", fetch.connections,
                 "connections per large file, each fetching its own byte ranges (default 8)")
      ->check(CLI::Range(1, 64));
  // Sizes are read with the command line (cli::size_value): a bad one is refused naming its flag before any
  // request, whatever the mode.
  app.add_option("--min-split-size", fetch.min_split_size,
                 "files at least twice this size are fetched as parallel ranges of at least this size "
                 "(default 16M)")
      ->transform(provkit::cli::size_value(1));
  app.add_option("--max-rate", fetch.max_rate,
                 "cap on the bytes per second of the whole run, e.g. 50M (all files and connections together)")
      ->transform(provkit::cli::size_value(1));
  auto* endpoint = app.add_option("--endpoint", common.endpoint,
                                  "Hub URL (default: $HF_ENDPOINT, else https://huggingface.co)");
  auto* token_file = app.add_option("--token-file", common.token_file,
                                    "file holding a Hub token, used when neither HF_TOKEN nor the token file "
                                    "($HF_TOKEN_PATH, else $HF_HOME/token) has one");
  auto* retries = app.add_option("--retries", common.retries, "attempts per request before giving up (default 5)")
                      ->check(CLI::Range(1, 100));
  auto* connect_timeout =
      app.add_option("--connect-timeout", common.connect_timeout_s,
                     "seconds a source has to accept a connection, per attempt (default 10); a rerun with every "
                     "file in place asks each source once")
          ->check(CLI::Range(1, 600));
  auto* stall_timeout =
      app.add_option("--stall-timeout", common.stall_timeout_s,
                     "seconds without a byte before a transfer counts as stalled and is retried (default 60)")
          ->check(CLI::Range(1, 3600));

  auto* manifest_cmd = app.add_subcommand("manifest", "manifest tools");
  manifest_cmd->require_subcommand(1);
  auto* create = manifest_cmd->add_subcommand("create", "write a manifest for REPO[@REV] pinned to its commit");
  hffetch::CreateArgs create_args;
  create->add_option("repo", create_args.repo, "REPO[@REVISION], e.g. org/name@main")->required();
  create->add_option("--type", create_args.type, "model, dataset or space (default model)");
  create->add_option("--include", create_args.include, "only paths matching this glob (repeatable)");
  create->add_option("--exclude", create_args.exclude, "leave out paths matching this glob (repeatable)");
  create->add_option("--assemble", create_args.assemble,
                     "OUTPUT=PART,PART,... or OUTPUT=GLOB (natural order), then :SHA256 or :SHA256SUMS (the repo's "
                     "own file): add an assembly of split parts (repeatable)");
  create->add_option("-o,--output", create_args.output, "write the manifest here (default: standard output)");

  hffetch::MirrorArgs mirror_args;
  hffetch::add_mirror_command(app, mirror_args);
  hffetch::InspectArgs inspect_args;
  hffetch::add_inspect_command(app, inspect_args);
  const CLI::App* inspect = inspect_args.cmd;

  // Global options, and the commands each means something for (docs/hf-fetch.md, "Command line"):
  // the Hub options where a request is made, the cache where one is read, output everywhere.
  const CLI::App* export_cmd = mirror_args.export_cmd;
  for (auto* hub_option : {endpoint, token_file, retries, connect_timeout, stall_timeout})
    convention.global(hub_option, {&app, create, inspect});
  for (auto* output_option : {json_flag, quiet_flag, debug_flag})
    convention.global(output_option, {&app, create, export_cmd, inspect});
  convention.global(manifest, {&app, export_cmd, inspect});
  convention.global(jobs, {&app, inspect});
  convention.global(cache, {&app, export_cmd});
  if (auto stop = convention.parse(argc, argv))
    return provkit::cli::finish(*stop, "hf-fetch", provkit::cli::wants_json(argc, argv));
  provkit::cli::start_trace("hf-fetch", debug);
  fetch.common = create_args.common = inspect_args.common = common;
  mirror_args.manifests = manifests;
  mirror_args.cache_dir = fetch.cache_dir;

  // HF_HUB_OFFLINE=1 (huggingface_hub's switch, read the way it reads it) means --offline.
  if (!fetch.offline && provkit::hub::offline_from_env()) fetch.offline = fetch.offline_from_env = true;

  using Mode = hffetch::Output::Mode;
  bool tty = ::isatty(STDOUT_FILENO);
  if (progress.empty()) progress = quiet ? "none" : tty && !json ? "bar" : "lines";
  fetch.progress_lines = progress == "lines";
  Mode mode = json ? Mode::json : progress == "bar" ? Mode::tty : Mode::plain;
  bool creating = create->parsed();
  // A manifest written to stdout must not be mixed with event lines.
  auto output = hffetch::Output::make(mode == Mode::tty && creating ? Mode::plain : mode,
                                      quiet || (creating && create_args.output.empty() && !json));
  hffetch::Output& out = *output;
  try {
    if (creating) {
      if (json && create_args.output.empty())
        throw provkit::Error(provkit::ExitCode::usage, "--json needs -o FILE (the manifest and the events would mix)");
      return hffetch::run_manifest_create(create_args, out);
    }
    if (inspect_args.cmd->parsed()) {
      if (manifests.size() > 1) throw provkit::Error(provkit::ExitCode::usage, "inspect takes one --manifest");
      inspect_args.manifest = manifests.empty() ? "" : manifests.front();
      if (jobs->count()) inspect_args.jobs = fetch.jobs;
      return hffetch::run_inspect(inspect_args, out);
    }
    if (mirror_args.export_cmd->parsed()) {
      if (manifests.empty())
        throw provkit::Error(provkit::ExitCode::usage, "mirror export needs --manifest FILE (one or more)");
      return hffetch::run_mirror_export(mirror_args, out);
    }
    if (!fetch.repo.empty()) {
      if (!manifests.empty())
        throw provkit::Error(
            provkit::ExitCode::usage,
            "give REPO[@REV] or --manifest FILE, not both (--save-manifest writes the manifest of a REPO fetch)");
      return hffetch::run_fetch(fetch, out);
    }
    if (manifests.size() != 1)
      throw provkit::Error(provkit::ExitCode::usage,
                           manifests.empty()
                               ? "REPO[@REV] or --manifest FILE is required (or: hf-fetch manifest create ...)"
                               : "a fetch takes one manifest; --manifest was given " +
                                     std::to_string(manifests.size()) + " times");
    fetch.manifest = manifests.front();
    return hffetch::run_fetch(fetch, out);
  } catch (const provkit::Error& e) {
    out.error(with_token_hint(e, common.token_file));
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {  // the catch of last resort: a summary and exit 3, never an abort
    out.error(provkit::Error(provkit::Reason::internal, std::string("internal error: ") + e.what()));
    return static_cast<int>(provkit::ExitCode::network);
  } catch (...) {
    out.error(provkit::Error(provkit::Reason::internal, "internal error"));
    return static_cast<int>(provkit::ExitCode::network);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return provkit::cli::last_resort("hf-fetch", provkit::cli::wants_json(argc, argv), e.what());
  } catch (...) {
    return provkit::cli::last_resort("hf-fetch", provkit::cli::wants_json(argc, argv), "an unknown exception");
  }
}
