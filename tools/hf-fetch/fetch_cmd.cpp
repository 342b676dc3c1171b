// hf-fetch --manifest FILE: pre-flight against the live tree, download,
// verify, publish into the layout, assemble. Also --verify-only and
// --check-upstream.
#include <memory>

#include "commands.hpp"
#include "provkit/fetch.hpp"
#include "provkit/hfcache.hpp"
#include "provkit/hostcheck.hpp"
#include "provkit/hub.hpp"
#include "provkit/manifest.hpp"

namespace hffetch {

using namespace provkit;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<hfcache::Layout> make_layout(const FetchArgs& a, const Manifest& m) {
  if (!a.local_dir.empty()) return std::make_unique<hfcache::LocalDirLayout>(a.local_dir, m.revision);
  fs::path cache = a.cache_dir.empty() ? hfcache::default_hub_cache() : fs::path(a.cache_dir);
  return std::make_unique<hfcache::CacheLayout>(cache, m.repo, m.revision);
}

fetch::FileSpec spec_of(const ManifestFile& f) { return {f.path, f.size, f.sha256, f.git_oid}; }

// Where provkit remembers what it did to a file: "assemble" (stamp of an
// assembly's inputs) or "verified" (see fetch::verify_file_stamped).
fs::path stamp_path(const hfcache::Layout& layout, const std::string& kind, const std::string& path) {
  return layout.state_dir() / kind / (path + ".stamp");
}

int worse(int a, ExitCode b) {
  // Access refused outranks network trouble, which outranks a failed check.
  auto rank = [](int c) { return c == 4 ? 3 : c == 3 ? 2 : c == 1 ? 1 : 0; };
  return rank(static_cast<int>(b)) > rank(a) ? static_cast<int>(b) : a;
}

int verify_only(const Manifest& m, const hfcache::Layout& layout, Reporter& out) {
  std::size_t bad = 0, total = 0;
  auto report = [&](const std::string& path, const fetch::FileSpec& spec) {
    ++total;
    auto v = fetch::verify_file(layout.file_path(path), spec);
    bool ok = v.state == fetch::FileState::ok;
    if (!ok) ++bad;
    std::string detail;
    nlohmann::json f = {{"size", spec.size}};
    if (v.state == fetch::FileState::size_mismatch)
      detail = std::to_string(v.size) + " bytes on disk, " + std::to_string(spec.size) + " in the manifest";
    if (v.state == fetch::FileState::sha256_mismatch)
      detail = "expected " + spec.sha256.value_or("") + ", got " + v.sha256;
    if (v.state == fetch::FileState::git_oid_mismatch)
      detail = "expected git oid " + spec.git_oid.value_or("") + ", got " + v.git_oid;
    if (!v.sha256.empty()) f["sha256"] = v.sha256;
    out.event("verify", fetch::state_name(v.state), path, detail, !ok, f);
  };
  for (const auto& f : m.files) report(f.path, spec_of(f));
  // Assembled outputs are checked when the manifest says what they must be.
  for (const auto& a : m.assemble) {
    if (!a.sha256 && !a.size) continue;
    fetch::FileSpec spec{a.output, a.size.value_or(0), a.sha256, std::nullopt};
    if (!a.size) {  // size unknown: compare the hash only
      std::error_code ec;
      auto sz = fs::file_size(layout.file_path(a.output), ec);
      spec.size = ec ? 0 : sz;
      if (ec) {
        ++total;
        ++bad;
        out.event("verify", "MISSING", a.output, "", true);
        continue;
      }
    }
    report(a.output, spec);
  }
  int code = bad ? 1 : 0;
  out.summary({{"mode", "verify-only"}, {"files", total}, {"ok", total - bad}, {"failed", bad}, {"exit_code", code},
               {"location", layout.describe()}},
              bad ? std::to_string(bad) + " of " + std::to_string(total) + " files failed verification in " + layout.describe()
                  : "all " + std::to_string(total) + " files verified in " + layout.describe(),
              bad > 0);
  return code;
}

}  // namespace

int run_fetch(const FetchArgs& a, Reporter& out) {
  Manifest m = Manifest::load(a.manifest);
  auto layout = make_layout(a, m);
  if (a.verify_only) return verify_only(m, *layout, out);

  std::string endpoint = hub::endpoint_from(a.common.endpoint);
  hub::Token token = hub::find_token(a.common.token_file);
  http::Options ho;
  ho.retry.tries = a.common.retries;
  ho.stall_timeout_s = a.common.stall_timeout_s;
  if (!a.max_rate.empty()) ho.max_bytes_per_s = hostcheck::parse_size(a.max_rate);
  hub::HubClient client(endpoint, token.value, ho);

  // Pre-flight: exactly the manifest's files against the live tree, before a byte is fetched.
  auto tree = client.list_tree(m.repo, m.revision);
  auto checks = compare_with_tree(m, tree);
  std::size_t problems = 0;
  for (const auto& c : checks) {
    bool ok = c.state == UpstreamState::ok;
    if (!ok) ++problems;
    if (!ok || a.check_upstream) out.event("upstream", upstream_state_name(c.state), c.path, c.detail, !ok);
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

  std::vector<fetch::Job> jobs;
  std::vector<std::string> etags;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    const auto& f = m.files[i];
    std::string etag = checks[i].entry->etag();
    etags.push_back(etag);
    jobs.push_back({spec_of(f), hub::resolve_url(endpoint, m.repo, m.revision, f.path), layout->content_path(f.path, etag),
                    layout->partial_path(f.path, etag), layout->rejected_prefix(f.path, etag),
                    layout->lock_path(f.path, etag), stamp_path(*layout, "verified", f.path)});
    total += f.size;
  }
  out.note("fetching " + std::to_string(jobs.size()) + " files (" + human_bytes(total) + ") of " + m.repo.id + " at " +
           m.revision + " into " + layout->describe());

  fetch::Options fo;
  fo.http = ho;
  fo.bearer_token = token.value;
  fo.repo = m.repo;
  fo.max_parallel = a.jobs;
  fo.connections = a.connections;
  if (!a.min_split_size.empty()) {
    fo.min_split_size = hostcheck::parse_size(a.min_split_size);
    if (fo.min_split_size == 0) throw Error(ExitCode::usage, "--min-split-size must be more than 0");
  }
  out.begin_downloads(total, jobs.size());
  auto results = fetch::Downloader(fo).run(jobs, out);

  int code = 0;
  std::size_t downloaded = 0, present = 0, failed = 0;
  std::uint64_t transferred = 0;
  std::vector<std::pair<std::string, std::string>> sums;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    transferred += r.bytes_transferred;
    if (r.outcome == fetch::Outcome::present || r.outcome == fetch::Outcome::downloaded) {
      layout->publish(r.path, etags[i]);
      sums.emplace_back(r.path, r.sha256);
      (r.outcome == fetch::Outcome::present ? present : downloaded)++;
    } else {
      ++failed;
      code = worse(code, r.code);
    }
  }

  // Assembly needs every file; it is skipped when one failed.
  std::size_t assembled = 0;
  if (failed == 0) {
    for (const auto& e : m.assemble) {
      fetch::AssembleJob job;
      job.output = layout->file_path(e.output);
      for (const auto& p : e.parts) job.parts.push_back(layout->file_path(p));
      job.sha256 = e.sha256;
      job.size = e.size;
      job.stamp = stamp_path(*layout, "assemble", e.output);
      auto r = fetch::assemble(job);
      nlohmann::json f = {{"size", r.size}, {"sha256", r.sha256}};
      if (r.outcome == fetch::AssembleOutcome::mismatch) {
        ++failed;
        code = worse(code, ExitCode::check_failed);
        f["rejected"] = r.rejected.string();
        out.event("assemble", r.message.starts_with("size") ? "SIZE MISMATCH" : "SHA256 MISMATCH", e.output, r.message,
                  true, f);
        continue;
      }
      ++assembled;
      sums.emplace_back(e.output, r.sha256);
      out.event("assemble", "OK", e.output,
                r.outcome == fetch::AssembleOutcome::unchanged
                    ? "parts unchanged since the last assembly"
                    : "assembled from " + std::to_string(e.parts.size()) + " parts" +
                          (e.sha256 ? " and verified" : ""),
                false, f);
    }
  }
  if (failed == 0) layout->finish(sums);

  std::string text =
      failed ? std::to_string(failed) + " of " + std::to_string(m.files.size() + m.assemble.size()) +
                   " files failed; the others are verified in " + layout->describe()
             : "all " + std::to_string(m.files.size()) + " files verified (" + std::to_string(downloaded) +
                   " downloaded, " + std::to_string(present) + " already in place" +
                   (m.assemble.empty() ? "" : ", " + std::to_string(assembled) + " assembled") + ") in " +
                   layout->describe();
  out.summary({{"mode", "fetch"}, {"files", m.files.size()}, {"downloaded", downloaded}, {"present", present},
               {"failed", failed}, {"assembled", assembled}, {"bytes_transferred", transferred},
               {"location", layout->describe()}, {"exit_code", code}},
              text, failed > 0);
  return code;
}

}  // namespace hffetch
