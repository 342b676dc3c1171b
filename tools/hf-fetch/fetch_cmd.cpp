// hf-fetch --manifest FILE (hub::fetch_snapshot): the flags' values in, the last sentence out.
// Also --verify-only, --offline and --check-upstream.
#include "commands.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/text.hpp"

namespace hffetch {

using namespace provkit;

namespace {

// The summary's sentence. `offline_why`: how the run was told to stay offline; empty when it was not.
std::string sentence(const hub::Manifest& m, const hub::FetchReport& report, const std::string& offline_why) {
  auto n = [](std::size_t v) { return std::to_string(v); };
  hub::FetchReport r = report;
  r.location = util::printable(r.location);  // a directory given on the command line or by the environment
  if (r.stage == hub::FetchReport::Stage::verified)
    return r.verified.failed
               ? n(r.verified.failed) + " of " + n(r.verified.files) + " files failed verification in " + r.location
               : "all " + n(r.verified.files) + " files verified in " + r.location;
  auto h = [](std::uint64_t v) { return util::format_size(v); };
  if (r.stage == hub::FetchReport::Stage::no_space) {  // the disk gate refused the fetch: the plan's figures
    const auto& p = *r.space;
    return "not enough space on the file system of " + util::printable(p.target.string()) + ": this fetch needs " +
           h(p.needed) + " more (" + h(p.to_fetch) + " still to fetch, " + h(p.assembly_bytes) +
           " of assembly outputs; " + h(p.held) + " already held) but " + h(p.free) +
           " are free; nothing was downloaded (hf-fetch --dry-run shows the plan)";
  }
  if (r.stage == hub::FetchReport::Stage::planned) {
    const auto& p = *r.space;
    return "dry run: " + h(p.to_fetch) + " to fetch, " + h(p.held) + " already held" +
           (m.assemble.empty() ? "" : ", " + h(p.assembly_bytes) + " of assembly outputs") +
           (p.drop_bytes ? ", " + h(p.drop_bytes) + " of parts dropped once their outputs verify" : "") + "; " +
           h(p.needed) + " more needed on " + p.target.string() +
           (p.free == UINT64_MAX ? "" : ", " + h(p.free) + " free") + (p.fits() ? "" : ": it does not fit") +
           "; nothing was downloaded";
  }
  bool check_only = r.mode == hub::FetchOptions::Mode::check_upstream;
  if (r.stage == hub::FetchReport::Stage::upstream) {
    if (!r.upstream_problems)
      return "all " + n(r.upstream_files) + " files match the Hub tree of " + m.repo.id + " at " + m.revision;
    std::string differ = n(r.upstream_problems) + " of " + n(r.upstream_files) + " files differ from the Hub tree of " +
                         m.repo.id + " at " + m.revision;
    if (!r.local_copy_verifies) return differ + (check_only ? "" : "; nothing was downloaded");
    // Upstream moved on; nothing here is wrong. What is on disk, then what to do.
    return differ + ", but the copy in " + r.location + " is whole and verifies against the pinned manifest (all " +
           n(r.upstream_files) + " files); nothing was downloaded or changed. Keep serving it with --offline, or pin " +
           "what the Hub has now with hf-fetch " + m.repo.id + "@" + m.ref.value_or("main") + " --save-manifest FILE";
  }
  const auto& s = r.published;
  // Verified: what this run holds as verified; an assembly not attempted (a file failed) is neither.
  const std::size_t verified = s.downloaded + s.present + s.assembled + s.unchanged;
  std::string text =
      s.failed
          ? n(s.failed) + " of " + n(m.files.size() + m.assemble.size()) + " files failed; " +
                (verified ? n(verified) : std::string("none")) + " verified in " + r.location
          : "all " + n(m.files.size()) + " files verified (" + n(s.downloaded) + " downloaded, " +
                n(s.present - s.dropped_before) + " already in place" +
                (s.dropped_before ? ", " + n(s.dropped_before) + " parts dropped earlier" : "") +
                (s.assembled ? ", " + n(s.assembled) + " assembled" : "") +
                (s.unchanged ? ", " + n(s.unchanged) + (s.unchanged > 1 ? " outputs" : " output") + " unchanged" : "") +
                (s.dropped ? ", " + n(s.dropped) + " parts dropped (" + util::format_size(s.freed_bytes) + " freed)"
                           : "") +
                ") in " + r.location;
  if (!r.unreachable.empty())  // served as --offline would, since no source answered
    return text + (s.failed ? "; the sources could not be reached, so nothing was downloaded"
                            : ", offline: the sources could not be reached (the Hub's tree was not compared)");
  if (!offline_why.empty())
    text += s.failed
                ? ". This run was offline (" + offline_why +
                      "), so nothing was downloaded: run hf-fetch again with network access and without " +
                      (offline_why == "--offline" ? "--offline" : "HF_HUB_OFFLINE set") + " to fetch what is missing"
                : ", offline (" + offline_why + ")";
  return text;
}

}  // namespace

int run_fetch(const FetchArgs& a, Output& out) {
  SignalWatch watch(out, Output::Stopped::fetch, a.progress_lines ? a.progress_interval_s : 0);
  hub::FetchOptions o;
  o.http = a.common.http();
  o.http.max_bytes_per_s = a.max_rate;
  hub::Manifest m;
  std::vector<hub::TreeEntry> tree;
  if (!a.repo.empty()) {
    if (a.verify_only || a.offline)
      throw Error(ExitCode::usage,
                  std::string("REPO[@REV] is resolved on the Hub, but ") +
                      (a.verify_only        ? "--verify-only"
                       : a.offline_from_env ? "HF_HUB_OFFLINE is set"
                                            : "--offline") +
                      ": give the manifest of the fetch instead (--manifest FILE, written by --save-manifest)");
    auto [id, revision] = hub::parse_repo_revision(a.repo);
    auto type = hub::parse_repo_type(a.repo_type);
    if (!type) throw Error(ExitCode::usage, "--repo-type must be model, dataset or space");
    hub::HubClient client(hub::endpoint_from(a.common.endpoint), hub::find_token(a.common.token_file), o.http);
    // A manifest that is written pins every file by sha256 (Pin::content: the non-LFS files are read once
    // more for it, as `manifest create` reads them); one kept in memory by the tree's ids.
    m = hub::pin_from_tree(client, {*type, id}, revision, a.include, a.exclude, tree,
                           a.save_manifest.empty() ? hub::Pin::tree : hub::Pin::content);
    if (m.files.empty())
      throw Error(ExitCode::usage,
                  "no file of " + id + " at " + revision + " matches the --include/--exclude patterns");
    out.note("revision " + revision + " of " + id + " is commit " + m.revision + "; " + std::to_string(m.files.size()) +
             " files selected");
    add_assemblies(m, a.assemble, client);
    m.validate("(the manifest of " + a.repo + ")");  // what --save-manifest writes reads back
    if (!a.save_manifest.empty()) {
      util::write_file_atomic(a.save_manifest, m.to_yaml());
      out.note("wrote " + a.save_manifest + ": pass it as --manifest to fetch exactly these files again");
    }
    o.tree = &tree;
  } else {
    if (!a.include.empty() || !a.exclude.empty() || !a.assemble.empty())
      throw Error(ExitCode::usage,
                  "--include/--exclude/--assemble go with hf-fetch REPO[@REV]; a manifest names its files and "
                  "assemblies itself");
    m = hub::Manifest::load(a.manifest);
    if (!a.save_manifest.empty()) util::write_file_atomic(a.save_manifest, m.to_yaml());
  }
  o.dry_run = a.dry_run;
  o.drop_parts = a.drop_parts;
  auto layout = hub::open_layout(m, a.cache_dir, a.local_dir);
  // Never a silent overwrite of a path the layout writes itself, either way.
  if (auto r = hub::find_reserved_path(m, *layout))
    throw input_error(m.source, r->line,
                      "'" + r->path + "' cannot be placed in " + layout->describe() + ": " + r->reason +
                          "; fetch into the cache (--cache-dir) instead");
  using Mode = hub::FetchOptions::Mode;
  o.mode = a.verify_only ? Mode::verify_only : a.check_upstream ? Mode::check_upstream : Mode::fetch;
  o.offline = a.offline && !a.verify_only;
  std::string why = !o.offline ? "" : a.offline_from_env ? "HF_HUB_OFFLINE is set" : "--offline";
  if (o.offline) {
    if (a.check_upstream)
      throw Error(ExitCode::usage, "--check-upstream needs the Hub, but " + why + ": nothing can be checked offline");
    out.note("offline (" + why + "): checking the " + std::to_string(m.files.size()) + " files of " + m.repo.id +
             " at " + m.revision + " in " + layout->describe() + " without the network");
  }
  o.endpoint = a.common.endpoint;
  o.mirrors = a.mirrors;
  o.token_file = a.common.token_file;
  o.jobs = a.jobs;
  o.connections = a.connections;
  o.min_split_size = a.min_split_size;
  auto r = hub::fetch_snapshot(m, *layout, o, out);
  using Stage = hub::FetchReport::Stage;
  bool problem = r.gate() || (r.stage == Stage::verified   ? r.verified.failed > 0
                              : r.stage == Stage::upstream ? r.upstream_problems > 0
                                                           : r.stage == Stage::published && r.published.failed > 0);
  int code = r.exit_code();
  std::optional<ReasonId> reason;
  std::string words = sentence(m, r, why);
  nlohmann::json fields = hub::to_json(r);
  if (auto gate = r.gate()) {  // the disk gate: one reason, dry run or fetch
    reason = *gate;
    if (r.stage == Stage::no_space) fields["message"] = words;  // the run stopped on it
  } else if (auto upstream = r.upstream_refusal()) {
    reason = *upstream;
  } else if (code == static_cast<int>(ExitCode::check_failed)) {
    reason = cli::Reason::verification_failed;
  } else if (code != 0) {
    reason = reason_for(static_cast<ExitCode>(code));
  }
  out.summary(code, reason, std::move(fields), words, problem);
  return code;
}

}  // namespace hffetch
