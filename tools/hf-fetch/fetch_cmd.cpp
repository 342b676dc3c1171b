// hf-fetch --manifest FILE: pre-flight against the live tree, download,
// verify, publish into the layout, assemble (the steps: provkit/snapshot.hpp).
// Also --verify-only, --offline and --check-upstream.
#include "commands.hpp"
#include "provkit/host/system.hpp"
#include "provkit/util/size.hpp"
#include "provkit/hub/source.hpp"
#include "provkit/hub/snapshot.hpp"

namespace hffetch {

using namespace provkit;

namespace {

// --max-rate SIZE (bytes per second); a bad value names the flag.
std::uint64_t parse_rate(const std::string& text) {
  std::uint64_t rate = 0;
  try {
    rate = util::parse_size(text);
  } catch (const Error& e) {
    throw Error(ExitCode::usage, std::string("--max-rate: ") + e.what());
  }
  if (rate == 0) throw Error(ExitCode::usage, "--max-rate must be more than 0 bytes per second");
  return rate;
}

int verify_only(const hub::Manifest& m, const hub::hfcache::Layout& layout, Output& out) {
  auto s = hub::verify_snapshot(m, layout, out);
  int code = s.failed ? 1 : 0;
  out.summary({{"mode", "verify-only"}, {"files", s.files}, {"ok", s.files - s.failed}, {"failed", s.failed},
               {"exit_code", code}, {"location", layout.describe()}},
              s.failed ? std::to_string(s.failed) + " of " + std::to_string(s.files) + " files failed verification in " +
                             layout.describe()
                       : "all " + std::to_string(s.files) + " files verified in " + layout.describe(),
              s.failed > 0);
  return code;
}

// After the downloads (or the offline check): publish, assemble, say how it went.
// `offline_why`: how the run was told to stay offline; empty when it was not.
int publish(const hub::Manifest& m, hub::hfcache::Layout& layout, const hub::SnapshotFiles& files, Output& out,
            const std::string& offline_why) {
  auto s = hub::publish_snapshot(m, layout, files, out);
  int code = static_cast<int>(s.code);
  std::string text =
      s.failed ? std::to_string(s.failed) + " of " + std::to_string(m.files.size() + m.assemble.size()) +
                     " files failed; the others are verified in " + layout.describe()
               : "all " + std::to_string(m.files.size()) + " files verified (" + std::to_string(s.downloaded) +
                     " downloaded, " + std::to_string(s.present) + " already in place" +
                     (m.assemble.empty() ? "" : ", " + std::to_string(s.assembled) + " assembled") + ") in " +
                     layout.describe();
  if (!offline_why.empty())
    text += s.failed ? ". This run was offline (" + offline_why +
                           "), so nothing was downloaded: run hf-fetch again with network access and without " +
                           (offline_why == "--offline" ? "--offline" : "HF_HUB_OFFLINE set") +
                           " to fetch what is missing"
                     : ", offline (" + offline_why + ")";
  nlohmann::json fields = {{"mode", "fetch"}, {"files", m.files.size()}, {"downloaded", s.downloaded},
                           {"present", s.present}, {"failed", s.failed}, {"assembled", s.assembled},
                           {"bytes_transferred", s.bytes_transferred}, {"location", layout.describe()},
                           {"exit_code", code}};
  if (!offline_why.empty()) fields["offline"] = true;
  out.summary(fields, text, s.failed > 0);
  return code;
}

}  // namespace

int run_fetch(const FetchArgs& a, Output& out) {
  std::uint64_t max_rate = a.max_rate.empty() ? 0 : parse_rate(a.max_rate);
  hub::Manifest m = hub::Manifest::load(a.manifest);
  auto layout = hub::open_layout(m, a.cache_dir, a.local_dir);
  // Never a silent overwrite of a path the layout writes itself, either way.
  if (auto r = hub::find_reserved_path(m, *layout))
    throw input_error(m.source, r->line, "'" + r->path + "' cannot be placed in " + layout->describe() + ": " +
                                             r->reason + "; fetch into the cache (--cache-dir) instead");
  if (a.verify_only) return verify_only(m, *layout, out);
  if (a.offline) {
    std::string why = a.offline_from_env ? "HF_HUB_OFFLINE is set" : "--offline";
    if (a.check_upstream)
      throw Error(ExitCode::usage, "--check-upstream needs the Hub, but " + why + ": nothing can be checked offline");
    out.note("offline (" + why + "): checking the " + std::to_string(m.files.size()) + " files of " + m.repo.id +
             " at " + m.revision + " in " + layout->describe() + " without the network");
    return publish(m, *layout, hub::check_in_place(m, *layout, out), out, why);
  }

  std::string endpoint = hub::endpoint_from(a.common.endpoint);
  hub::Token token = hub::find_token(a.common.token_file);
  http::Options ho;
  ho.retry.tries = a.common.retries;
  ho.stall_timeout_s = a.common.stall_timeout_s;
  ho.max_bytes_per_s = max_rate;
  hub::HubClient client(endpoint, token.value, ho);

  // Pre-flight: exactly the manifest's files against the live tree, before a byte is fetched.
  auto checks = hub::check_upstream(m, *layout, client.list_tree(m.repo, m.revision));
  std::size_t problems = 0;
  for (const auto& c : checks) {
    bool ok = c.state == hub::UpstreamState::ok;
    if (!ok) ++problems;
    if (!ok || a.check_upstream) out.event("upstream", hub::upstream_state_name(c.state), c.path, c.detail, !ok);
  }
  if (a.check_upstream || problems) {
    int code = problems ? 1 : 0;
    out.summary({{"mode", a.check_upstream ? "check-upstream" : "fetch"}, {"files", checks.size()},
                 {"upstream_problems", problems}, {"bytes_transferred", 0}, {"exit_code", code}},
                problems ? std::to_string(problems) + " of " + std::to_string(checks.size()) +
                               " files differ from the Hub tree of " + m.repo.id + " at " + m.revision +
                               (a.check_upstream ? "" : "; nothing was downloaded")
                         : "all " + std::to_string(checks.size()) + " files match the Hub tree of " + m.repo.id +
                               " at " + m.revision,
                problems > 0);
    return code;
  }

  auto plan = hub::plan_downloads(m, *layout, checks, endpoint);
  out.note("fetching " + std::to_string(plan.jobs.size()) + " files (" + human_bytes(plan.total_bytes) + ") of " +
           m.repo.id + " at " + m.revision + " into " + layout->describe());

  download::Options fo;
  fo.http = ho;
  fo.max_parallel = a.jobs;
  fo.connections = a.connections;
  if (!a.min_split_size.empty()) {
    fo.min_split_size = util::parse_size(a.min_split_size);
    if (fo.min_split_size == 0) throw Error(ExitCode::usage, "--min-split-size must be more than 0");
  }
  out.begin_downloads(plan.total_bytes, plan.jobs.size());
  hub::HubSource source(m.repo, token.value);
  auto results = download::Downloader(fo, source).run(plan.jobs, out);
  return publish(m, *layout, {std::move(results), std::move(plan.etags)}, out, {});
}

}  // namespace hffetch
