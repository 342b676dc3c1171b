#include "provkit/hub/fetch.hpp"

#include <algorithm>
#include <optional>

#include "provkit/util/fs.hpp"
#include "provkit/util/interrupt.hpp"
#include "provkit/util/log.hpp"
#include "source.hpp"

namespace provkit::hub {

std::string_view reason_name(UpstreamRefusal r) {
  switch (r) {
    case UpstreamRefusal::changed: return "upstream_changed";
    case UpstreamRefusal::moved: return "upstream_moved";
  }
  return "upstream_changed";
}

ExitCode exit_code(UpstreamRefusal r) {
  return r == UpstreamRefusal::moved ? ExitCode::upstream_moved : ExitCode::check_failed;
}

int FetchReport::exit_code() const {
  switch (stage) {
    case Stage::verified: return verified.failed ? 1 : 0;
    case Stage::upstream: return upstream_refusal() ? static_cast<int>(hub::exit_code(*upstream_refusal())) : 0;
    case Stage::planned:
    case Stage::no_space: return gate() ? static_cast<int>(hub::exit_code(*gate())) : 0;
    case Stage::published: break;
  }
  return static_cast<int>(published.code());
}

namespace {
// Where main is asked of the Hub: only when refs/main does not already hold
// the commit, and only for the cache (a local dir has no refs).
hfcache::RefPlan refs_online(const Manifest& m, const hfcache::Layout& layout, HubClient& client) {
  auto* cache = dynamic_cast<const hfcache::CacheLayout*>(&layout);
  if (!cache || m.ref == "main") return plan_refs(m, m.revision, true);
  try {
    if (cache->guard().read_if_present(cache->ref_path("main"), 4096) == m.revision)
      return plan_refs(m, m.revision, true);
  } catch (const Error&) {  // not a plain file: asked of the Hub as if absent
  }
  std::optional<std::string> main;
  try {
    main = client.resolve_commit(m.repo, "main");
  } catch (const Error& e) {
    // The Hub not reachable (a node behind a mirror): as offline. No main, or no access: refs/main is left.
    if (e.code() == ExitCode::network) return plan_refs(m, std::nullopt, false);
  }
  return plan_refs(m, main, true);
}

// A source that gave no usable answer: nothing answered (refused, timed out, ...) or it failed the request
// (5xx, 429 after the retries). An answer that is malformed or names another commit is not this: it is refused.
bool unreachable(const Error& e) { return e.is(http::TransportFailure::no_answer) || e.is(HubRefusal::upstream); }

// The assembly outputs' temporaries that runs killed outright left beside them ("<output>.assemble-PID-N",
// up to an output's size each): removed before the disk gate counts the free space, when no live run holds
// their lock.
void sweep_assembly_leftovers(const Manifest& m, const hfcache::Layout& layout) {
  for (const auto& e : m.assemble) {
    try {
      std::filesystem::path output = layout.file_path(e.output);
      util::Fd dir = layout.guard().parent(output, false);
      auto swept = util::sweep_temporaries(dir.get(), output.parent_path(), output.filename().string(), "assemble");
      if (swept.count)
        util::log::debug("fetch", [&] {
          return "removed " + std::to_string(swept.count) + " unfinished assembly temporaries beside " + e.output +
                 " (" + std::to_string(swept.bytes) + " bytes)";
        });
    } catch (const Error&) {  // no such directory yet: nothing was left there
    }
  }
}
}  // namespace

FetchReport fetch_snapshot(const Manifest& m, hfcache::Layout& layout, const FetchOptions& o, FetchObserver& observer) {
  using Mode = FetchOptions::Mode;
  FetchReport r;
  r.mode = o.mode;
  r.offline = o.offline;
  r.location = layout.describe();
  r.files = m.files.size();
  if (o.mode == Mode::verify_only) {
    r.stage = FetchReport::Stage::verified;
    r.verified = verify_snapshot(m, layout, observer);
    return r;
  }
  // Parts dropped earlier stay dropped while their outputs verify (a fetch that keeps parts wants them back).
  DroppedParts dropped;
  if (o.drop_parts) dropped = find_dropped_parts(m, layout, true);
  const PartsPolicy parts{o.drop_parts, &dropped};
  if (o.mode == Mode::fetch) sweep_assembly_leftovers(m, layout);
  if (o.offline) {
    r.published = publish_snapshot(m, layout, check_in_place(m, layout, observer, &dropped), observer,
                                   plan_refs(m, {}, false), parts);
    return r;
  }
  // Every file in place and verified, known before any request (checked once, lazily; no event): a rerun that
  // needs nothing only compares, so the Hub's API is asked once per call (it is then the connect timeout that
  // bounds it), and sources that cannot be reached leave the copy here to be served as --offline would serve it.
  std::optional<bool> complete;
  auto here_complete = [&] {
    if (!complete) complete = all_in_place(m, layout, &dropped);
    return *complete;
  };
  const bool needs_nothing = o.mode == Mode::fetch && !o.dry_run && !o.tree && here_complete();
  http::Options api = o.http;
  if (needs_nothing) api.retry.tries = 1;
  std::vector<SourceFailure> failed_sources;
  std::string endpoint = endpoint_from(o.endpoint);
  Token token = find_token(o.token_file);
  HubClient hub_client(endpoint, token, api);
  // The sources in order: each --mirror, then the endpoint. Each file is asked of the first source that
  // has it in its tree as the manifest pins it and has not yet failed it; a file a mirror serves wrong
  // (or refuses) is asked of the next source, while the mirror still serves the others. A mirror that
  // cannot be listed is left at once (one attempt, no retries). The token goes to the endpoint only.
  std::vector<std::string> sources;
  for (const auto& mirror : o.mirrors) sources.push_back(endpoint_from(mirror));
  sources.push_back(endpoint);
  const std::size_t n = m.files.size();
  std::vector<std::optional<download::JobResult>> got(n);  // by manifest file: what a source delivered
  std::vector<std::string> etags(n);
  for (std::size_t i = 0; i < n; ++i)
    if (dropped.contains(m.files[i].path)) {
      download::JobResult present;
      present.path = m.files[i].path;
      present.outcome = download::Outcome::present;
      got[i] = std::move(present);
      FileCheck check{m.files[i].path, file_spec(m.files[i]), {}, *dropped.output_of(m.files[i].path)};
      check.verification.state = download::FileState::ok;
      if (!o.dry_run && o.mode == Mode::fetch) observer.on_checked_in_place(check, layout);
    }
  std::uint64_t failed_bytes = 0;  // body bytes of attempts a mirror failed
  for (std::size_t si = 0; si < sources.size(); ++si) {
    const bool mirror = si + 1 < sources.size();
    if (mirror && o.mode == Mode::check_upstream) continue;  // the Hub's tree is the one compared
    http::Options http = o.http;
    if (mirror) http.retry.tries = 1;
    HubClient mirror_client(sources[si], Token{}, http);
    HubClient& client = mirror ? mirror_client : hub_client;
    observer.on_source(sources[si], mirror);

    // Pre-flight: exactly the manifest's files against the live tree, before a byte is fetched.
    std::vector<TreeEntry> listed;
    std::vector<UpstreamCheck> checks;
    try {
      if (!o.tree || mirror) listed = client.list_tree(m.repo, m.revision);
      checks = check_upstream(m, layout, o.tree && !mirror ? *o.tree : listed);
    } catch (const Error& e) {
      failed_sources.push_back({sources[si], e.what()});
      if (mirror) {
        observer.on_source_failed(sources[si], e.what());
        continue;
      }
      if (!needs_nothing || !unreachable(e)) throw;
      observer.on_sources_unreachable(failed_sources);
      r.offline = true;
      r.unreachable = std::move(failed_sources);
      r.published = publish_snapshot(m, layout, check_in_place(m, layout, observer, &dropped), observer,
                                     plan_refs(m, {}, false), parts);
      return r;
    }
    // The files this source is asked for: those still wanted; of a mirror, only those its tree has
    // as the manifest pins them (the others are the next source's).
    std::vector<std::size_t> take;
    for (std::size_t i = 0; i < n; ++i) {
      if (got[i]) continue;
      if (mirror && checks[i].state != UpstreamState::ok) {
        observer.on_source_lacks(sources[si], checks[i]);
        continue;
      }
      take.push_back(i);
    }
    if (mirror && take.empty()) {
      observer.on_source_failed(sources[si], "its tree has none of the files still to fetch as the manifest pins them");
      continue;
    }
    if (!mirror) {
      r.upstream_problems = static_cast<std::size_t>(
          std::count_if(checks.begin(), checks.end(), [](const auto& c) { return c.state != UpstreamState::ok; }));
      // The Hub moved on from the manifest: whether the copy here still verifies against it is what a script
      // must know (serve it, or fix it). --check-upstream compares the tree alone.
      r.local_copy_verifies = r.upstream_problems && o.mode == Mode::fetch && here_complete();
      for (auto& c : checks) {
        bool ok = c.state == UpstreamState::ok;
        if (!ok) c.local_copy_verifies = r.local_copy_verifies;
        if (!ok || o.mode == Mode::check_upstream) observer.on_upstream(c);
      }
      if (o.mode == Mode::check_upstream || r.upstream_problems) {
        r.stage = FetchReport::Stage::upstream;
        r.upstream_files = checks.size();
        return r;
      }
    }

    // A file a mirror lacks is planned (for the gate and the dry run only) under the blob name its
    // manifest gives it, so that a copy already in place counts as in place.
    std::vector<UpstreamCheck> planned = std::move(checks);  // not read again: no second copy of every file
    for (std::size_t i = 0; i < n; ++i)
      if (planned[i].state != UpstreamState::ok)
        planned[i].etag = m.files[i].git_oid ? *m.files[i].git_oid : m.files[i].sha256.value_or("");
    auto plan = plan_downloads(m, layout, planned, sources[si]);
    std::vector<UpstreamCheck>().swap(planned);  // its etags are in the plan now
    if (!r.space) {                              // the disk gate, once: at the first source that plans
      r.space = plan_space(m, layout, plan, o.drop_parts, &dropped);
      observer.on_space_plan(*r.space, o.dry_run);
      if (o.dry_run) {
        r.stage = FetchReport::Stage::planned;
        return r;
      }
      if (r.space->gate()) {
        r.stage = FetchReport::Stage::no_space;
        return r;
      }
    }
    DownloadPlan mine = plan.take(take);  // its etags moved: the plan is not read again
    observer.on_plan(m, layout, mine);
    layout.begin();  // an interrupted fetch leaves what huggingface_hub's would: snapshots/<commit>/, *.incomplete
    download::Options fo;
    fo.http = http;
    fo.max_parallel = o.jobs;
    fo.connections = o.connections;
    if (o.min_split_size) fo.min_split_size = o.min_split_size;
    fo.source = sources[si];  // each result names it: the file's provenance (JobResult::source)
    HubSource source(m.repo, mirror ? Token{} : token);
    auto results = download::Downloader(fo, source).run(mine.jobs(), observer);
    for (std::size_t k = 0; k < take.size(); ++k) {
      auto& j = results[k];
      bool ok = j.outcome == download::Outcome::present || j.outcome == download::Outcome::downloaded;
      if (mirror && !ok) {  // the next source is asked for it
        failed_bytes += j.bytes_transferred;
        continue;
      }
      etags[take[k]] = mine.etags[k];
      got[take[k]] = std::move(j);
    }
    // Only a mirror leaves files to the next source; the endpoint's results are final, failures included.
    if (!std::all_of(got.begin(), got.end(), [](const auto& g) { return g.has_value(); })) continue;
    SnapshotFiles files;
    for (std::size_t i = 0; i < n; ++i) {
      files.results.push_back(std::move(*got[i]));
      files.etags.push_back(std::move(etags[i]));
    }
    r.published = publish_snapshot(m, layout, files, observer, refs_online(m, layout, hub_client), parts);
    r.published.bytes_transferred += failed_bytes;
    return r;
  }
  return r;  // not reached: the last source returns or throws
}

Manifest pin_from_tree(HubClient& client, const Repo& repo, const std::string& revision,
                       const std::vector<std::string>& include, const std::vector<std::string>& exclude,
                       std::vector<TreeEntry>& tree, Pin pin,
                       const std::function<void(const ManifestFile&, const TreeEntry&)>& on_added) {
  Manifest m;
  m.repo = repo;
  m.revision = client.resolve_commit(repo, revision);
  m.ref = ref_for_revision(revision, m.revision);
  m.source = repo.id + "@" + revision;
  tree = client.list_tree(repo, m.revision);
  std::function<std::string(const TreeEntry&)> fetch_small;
  if (pin == Pin::content)
    fetch_small = [&](const TreeEntry& e) { return client.download_small(m.repo, m.revision, e.path); };
  m.files = pin_tree_files(tree, include, exclude, fetch_small, [&](const ManifestFile& f, const TreeEntry& e) {
    if (on_added) on_added(f, e);
  });
  return m;
}

nlohmann::json to_json(const FetchReport& r) {
  using Stage = FetchReport::Stage;
  const int code = r.exit_code();
  if (r.stage == Stage::verified)
    return {{"mode", "verify-only"},       {"files", r.verified.files}, {"ok", r.verified.files - r.verified.failed},
            {"failed", r.verified.failed}, {"exit_code", code},         {"location", r.location}};
  if (r.stage == Stage::upstream) {
    nlohmann::json j = {{"mode", r.mode == FetchOptions::Mode::check_upstream ? "check-upstream" : "fetch"},
                        {"files", r.upstream_files},
                        {"upstream_problems", r.upstream_problems},
                        {"bytes_transferred", 0},
                        {"exit_code", code}};
    if (r.mode == FetchOptions::Mode::fetch) j["local_copy_verifies"] = r.local_copy_verifies;
    return j;
  }
  if (r.stage == Stage::planned || r.stage == Stage::no_space) {
    bool dry = r.stage == Stage::planned;
    nlohmann::json j = {{"mode", dry ? "dry-run" : "fetch"},
                        {"files", r.files},
                        {"bytes_transferred", 0},
                        {"exit_code", code},
                        {"location", r.location}};
    if (r.offline) j["offline"] = true;
    nlohmann::json plan = to_json(*r.space);
    for (auto& [k, v] : plan.items()) j[dry ? k : "plan_" + k] = v;
    if (r.gate()) j["detail"] = gate_detail(*r.space);  // the same in both: the figures the refusal is made of
    return j;
  }
  const auto& s = r.published;
  nlohmann::json j = {{"mode", "fetch"},
                      {"files", r.files},
                      {"downloaded", s.downloaded},
                      {"present", s.present},
                      {"failed", s.failed},
                      {"assembled", s.assembled},
                      {"unchanged", s.unchanged},
                      {"dropped_before", s.dropped_before},
                      {"dropped", s.dropped},
                      {"freed_bytes", s.freed_bytes},
                      {"bytes_transferred", s.bytes_transferred},
                      {"location", r.location},
                      {"exit_code", code}};
  if (r.offline) j["offline"] = true;
  if (!r.unreachable.empty()) {
    nlohmann::json failed = nlohmann::json::array();
    for (const auto& f : r.unreachable) failed.push_back({{"source", http::redact_url(f.url)}, {"error", f.why}});
    j["sources_unreachable"] = std::move(failed);
  }
  if (r.space) {
    nlohmann::json plan = to_json(*r.space);
    for (auto& [k, v] : plan.items()) j["plan_" + k] = v;
  }
  return j;
}

}  // namespace provkit::hub
