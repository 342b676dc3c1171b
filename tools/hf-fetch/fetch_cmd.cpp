// hf-fetch --manifest FILE (hub::fetch_snapshot): the flags' values in, the last sentence out.
// Also --verify-only, --offline and --check-upstream.
#include "commands.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/text.hpp"

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

// The summary's sentence. `offline_why`: how the run was told to stay offline; empty when it was not.
std::string sentence(const hub::Manifest& m, const hub::FetchReport& report, const std::string& offline_why) {
  auto n = [](std::size_t v) { return std::to_string(v); };
  hub::FetchReport r = report;
  r.location = util::printable(r.location);  // a directory given on the command line or by the environment
  if (r.stage == hub::FetchReport::Stage::verified)
    return r.verified.failed ? n(r.verified.failed) + " of " + n(r.verified.files) + " files failed verification in " + r.location
                             : "all " + n(r.verified.files) + " files verified in " + r.location;
  bool check_only = r.mode == hub::FetchOptions::Mode::check_upstream;
  if (r.stage == hub::FetchReport::Stage::upstream)
    return r.upstream_problems ? n(r.upstream_problems) + " of " + n(r.upstream_files) + " files differ from the Hub tree of " +
                                     m.repo.id + " at " + m.revision + (check_only ? "" : "; nothing was downloaded")
                               : "all " + n(r.upstream_files) + " files match the Hub tree of " + m.repo.id + " at " + m.revision;
  const auto& s = r.published;
  std::string text = s.failed ? n(s.failed) + " of " + n(m.files.size() + m.assemble.size()) +
                                    " files failed; the others are verified in " + r.location
                              : "all " + n(m.files.size()) + " files verified (" + n(s.downloaded) + " downloaded, " +
                                    n(s.present) + " already in place" +
                                    (m.assemble.empty() ? "" : ", " + n(s.assembled) + " assembled") + ") in " + r.location;
  if (!offline_why.empty())
    text += s.failed ? ". This run was offline (" + offline_why +
                           "), so nothing was downloaded: run hf-fetch again with network access and without " +
                           (offline_why == "--offline" ? "--offline" : "HF_HUB_OFFLINE set") + " to fetch what is missing"
                     : ", offline (" + offline_why + ")";
  return text;
}

}  // namespace

int run_fetch(const FetchArgs& a, Output& out) {
  hub::FetchOptions o;
  o.http = a.common.http();
  o.http.max_bytes_per_s = a.max_rate.empty() ? 0 : parse_rate(a.max_rate);
  hub::Manifest m = hub::Manifest::load(a.manifest);
  auto layout = hub::open_layout(m, a.cache_dir, a.local_dir);
  // Never a silent overwrite of a path the layout writes itself, either way.
  if (auto r = hub::find_reserved_path(m, *layout))
    throw input_error(m.source, r->line, "'" + r->path + "' cannot be placed in " + layout->describe() + ": " +
                                             r->reason + "; fetch into the cache (--cache-dir) instead");
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
  o.token_file = a.common.token_file;
  o.jobs = a.jobs;
  o.connections = a.connections;
  o.min_split_size = [&a] {
    if (a.min_split_size.empty()) return std::uint64_t{0};
    auto size = util::parse_size(a.min_split_size);
    if (size == 0) throw Error(ExitCode::usage, "--min-split-size must be more than 0");
    return size;
  };
  auto r = hub::fetch_snapshot(m, *layout, o, out);
  using Stage = hub::FetchReport::Stage;
  bool problem = r.stage == Stage::verified   ? r.verified.failed > 0
                 : r.stage == Stage::upstream ? r.upstream_problems > 0
                                              : r.published.failed > 0;
  int code = r.exit_code();
  std::optional<cli::Reason> reason;
  if (code == static_cast<int>(ExitCode::check_failed))
    reason = r.stage == Stage::upstream ? cli::Reason::upstream_changed : cli::Reason::verification_failed;
  else if (code != 0)
    reason = cli::reason_for(static_cast<ExitCode>(code));
  out.summary(code, reason, hub::to_json(r), sentence(m, r, why), problem);
  return code;
}

}  // namespace hffetch
