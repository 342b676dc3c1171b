#include "provkit/hub/fetch.hpp"

#include "provkit/hub/source.hpp"

namespace provkit::hub {

int FetchReport::exit_code() const {
  switch (stage) {
    case Stage::verified: return verified.failed ? 1 : 0;
    case Stage::upstream: return upstream_problems ? 1 : 0;
    case Stage::published: break;
  }
  return static_cast<int>(published.code);
}

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
  if (o.offline) {
    r.published = publish_snapshot(m, layout, check_in_place(m, layout, observer), observer);
    return r;
  }
  std::string endpoint = endpoint_from(o.endpoint);
  Token token = find_token(o.token_file);
  HubClient client(endpoint, token.value, o.http);

  // Pre-flight: exactly the manifest's files against the live tree, before a byte is fetched.
  auto checks = check_upstream(m, layout, client.list_tree(m.repo, m.revision));
  for (const auto& c : checks) {
    bool ok = c.state == UpstreamState::ok;
    r.upstream_problems += !ok;
    if (!ok || o.mode == Mode::check_upstream) observer.on_upstream(c);
  }
  if (o.mode == Mode::check_upstream || r.upstream_problems) {
    r.stage = FetchReport::Stage::upstream;
    r.upstream_files = checks.size();
    return r;
  }

  auto plan = plan_downloads(m, layout, checks, endpoint);
  observer.on_plan(m, layout, plan);
  download::Options fo;
  fo.http = o.http;
  fo.max_parallel = o.jobs;
  fo.connections = o.connections;
  if (auto split = o.min_split_size ? o.min_split_size() : 0) fo.min_split_size = split;
  HubSource source(m.repo, token.value);
  auto results = download::Downloader(fo, source).run(plan.jobs, observer);
  r.published = publish_snapshot(m, layout, {std::move(results), std::move(plan.etags)}, observer);
  return r;
}

nlohmann::json to_json(const FetchReport& r) {
  using Stage = FetchReport::Stage;
  const int code = r.exit_code();
  if (r.stage == Stage::verified)
    return {{"mode", "verify-only"}, {"files", r.verified.files}, {"ok", r.verified.files - r.verified.failed},
            {"failed", r.verified.failed}, {"exit_code", code}, {"location", r.location}};
  if (r.stage == Stage::upstream)
    return {{"mode", r.mode == FetchOptions::Mode::check_upstream ? "check-upstream" : "fetch"},
            {"files", r.upstream_files}, {"upstream_problems", r.upstream_problems}, {"bytes_transferred", 0},
            {"exit_code", code}};
  const auto& s = r.published;
  nlohmann::json j = {{"mode", "fetch"}, {"files", r.files}, {"downloaded", s.downloaded}, {"present", s.present},
                      {"failed", s.failed}, {"assembled", s.assembled}, {"bytes_transferred", s.bytes_transferred},
                      {"location", r.location}, {"exit_code", code}};
  if (r.offline) j["offline"] = true;
  return j;
}

}  // namespace provkit::hub
