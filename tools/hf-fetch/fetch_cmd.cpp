// hf-fetch --manifest FILE: pre-flight against the live tree, download,
// verify, publish into the layout, assemble. Also --verify-only and
// --check-upstream.
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "commands.hpp"
#include "provkit/fetch.hpp"
#include "provkit/fsutil.hpp"
#include "provkit/hash.hpp"
#include "provkit/hfcache.hpp"
#include "provkit/hostcheck.hpp"
#include "provkit/hub.hpp"
#include "provkit/hub_source.hpp"
#include "provkit/manifest.hpp"
#include "provkit/parallel.hpp"

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
  return path_with_suffix(layout.state_dir() / kind / path, ".stamp");
}

// A path the layout writes itself (--local-dir's SHA256SUMS, .cache/huggingface)
// is refused before anything is fetched: never a silent overwrite either way.
void check_no_reserved_paths(const Manifest& m, const hfcache::Layout& layout) {
  auto check = [&](const std::string& path, int line) {
    if (auto why = layout.reserved_reason(path); !why.empty())
      throw input_error(m.source, line, "'" + path + "' cannot be placed in " + layout.describe() + ": " + why +
                                            "; fetch into the cache (--cache-dir) instead");
  };
  for (const auto& f : m.files) check(f.path, f.line);
  for (const auto& a : m.assemble) check(a.output, a.line);
}

// --max-rate SIZE (bytes per second); a bad value names the flag.
std::uint64_t parse_rate(const std::string& text) {
  std::uint64_t rate = 0;
  try {
    rate = hostcheck::parse_size(text);
  } catch (const Error& e) {
    throw Error(ExitCode::usage, std::string("--max-rate: ") + e.what());
  }
  if (rate == 0) throw Error(ExitCode::usage, "--max-rate must be more than 0 bytes per second");
  return rate;
}

// A blob name only the tree vouches for (the manifest pins the file by
// sha256 alone) may already be taken, in a cache shared with other commits,
// by content that truly has that git id. Then the tree is wrong about this
// file: it is UPSTREAM CHANGED, and that blob is left alone, not moved aside
// as a "wrong copy".
void refute_names_taken(const Manifest& m, const hfcache::Layout& layout, std::vector<UpstreamCheck>& checks) {
  for (std::size_t i = 0; i < checks.size(); ++i) {
    UpstreamCheck& c = checks[i];
    if (!c.git_oid_to_verify) continue;
    fs::path stored = layout.content_path(c.path, c.etag);
    std::error_code ec;
    if (stored.filename() != c.etag || !fs::is_regular_file(stored, ec)) continue;  // not named by its id
    FileDigests d = digest_file(stored);
    const ManifestFile& f = m.files[i];
    if (d.git_oid == c.etag && (d.size != f.size || d.sha256 != f.sha256.value_or(d.sha256))) {
      c.state = UpstreamState::changed;
      c.detail = "the tree names its blob " + c.etag + ", but " + stored.string() +
                 " holds other content with that git id";
      c.etag.clear();
      c.git_oid_to_verify.reset();
    }
  }
}

int worse(int a, ExitCode b) {
  // Access refused outranks network trouble, which outranks a failed check.
  auto rank = [](int c) { return c == 4 ? 3 : c == 3 ? 2 : c == 1 ? 1 : 0; };
  return rank(static_cast<int>(b)) > rank(a) ? static_cast<int>(b) : a;
}

// What is wrong with a file on disk, for its line (empty when OK or missing).
std::string mismatch_detail(const fetch::FileSpec& spec, const fetch::Verification& v) {
  switch (v.state) {
    case fetch::FileState::size_mismatch:
      return std::to_string(v.size) + " bytes on disk, " + std::to_string(spec.size) + " in the manifest";
    case fetch::FileState::sha256_mismatch: return "expected " + spec.sha256.value_or("") + ", got " + v.sha256;
    case fetch::FileState::git_oid_mismatch: return "expected git oid " + spec.git_oid.value_or("") + ", got " + v.git_oid;
    default: return "";
  }
}

int verify_only(const Manifest& m, const hfcache::Layout& layout, Reporter& out) {
  std::size_t bad = 0, total = 0;
  auto report = [&](const std::string& path, const fetch::FileSpec& spec, const fetch::Verification& v) {
    ++total;
    bool ok = v.state == fetch::FileState::ok;
    if (!ok) ++bad;
    std::string detail = mismatch_detail(spec, v);
    nlohmann::json f = {{"size", spec.size}};
    if (!v.sha256.empty()) f["sha256"] = v.sha256;
    out.event("verify", fetch::state_name(v.state), path, detail, !ok, f);
  };
  std::vector<std::pair<std::string, fetch::FileSpec>> items;
  for (const auto& f : m.files) items.emplace_back(f.path, spec_of(f));
  // Assembled outputs are checked when the manifest says what they must be.
  for (const auto& a : m.assemble) {
    if (!a.sha256 && !a.size) continue;
    fetch::FileSpec spec{a.output, a.size.value_or(0), a.sha256, std::nullopt};
    if (!a.size) {  // size unknown: compare the hash only (a missing file stays MISSING)
      std::error_code ec;
      auto sz = fs::file_size(layout.file_path(a.output), ec);
      spec.size = ec ? 0 : sz;
    }
    items.emplace_back(a.output, spec);
  }
  // One file per core at once (sha256 is sequential within a file); lines in
  // manifest order, each as soon as it and those before it are done.
  std::vector<std::optional<fetch::Verification>> done(items.size());
  std::size_t next_to_report = 0;
  std::mutex mu;
  parallel_for(items.size(), std::max(1u, std::thread::hardware_concurrency()), [&](std::size_t i) {
    auto v = fetch::verify_file(layout.file_path(items[i].first), items[i].second);
    std::lock_guard lock(mu);
    done[i] = std::move(v);
    for (; next_to_report < items.size() && done[next_to_report]; ++next_to_report)
      report(items[next_to_report].first, items[next_to_report].second, *done[next_to_report]);
  });
  int code = bad ? 1 : 0;
  out.summary({{"mode", "verify-only"}, {"files", total}, {"ok", total - bad}, {"failed", bad}, {"exit_code", code},
               {"location", layout.describe()}},
              bad ? std::to_string(bad) + " of " + std::to_string(total) + " files failed verification in " + layout.describe()
                  : "all " + std::to_string(total) + " files verified in " + layout.describe(),
              bad > 0);
  return code;
}

// --offline: no network at all. Every file must already be at its final place
// and verify (a verified stamp vouches for an unchanged file); one line per
// file. The blob's etag is not known without the Hub's tree, so the names it
// can have are tried: the git oid (plain git files), the sha256 (LFS files),
// and what the snapshot link already points at.
std::vector<fetch::JobResult> check_in_place(const Manifest& m, const hfcache::Layout& layout,
                                             std::vector<std::string>& etags, Reporter& out) {
  std::vector<fetch::JobResult> results;
  for (const auto& f : m.files) {
    std::vector<std::string> candidates;
    if (f.git_oid) candidates.push_back(*f.git_oid);
    if (f.sha256) candidates.push_back(*f.sha256);
    std::error_code ec;
    // What a link on disk points at is a name only if it has an id's shape.
    if (auto link = fs::read_symlink(layout.file_path(f.path), ec); !ec) {
      std::string name = link.filename().string();
      if (is_hex(name, 40) || is_hex(name, 64)) candidates.push_back(name);
    }
    fetch::FileSpec spec = spec_of(f);
    std::optional<fetch::Verification> first;
    std::string etag;
    for (const auto& c : candidates) {
      fs::path content = layout.content_path(f.path, c);
      if (!fs::exists(content, ec)) continue;
      auto v = fetch::verify_file_stamped(content, spec, stamp_path(layout, "verified", f.path));
      if (!first || v.state == fetch::FileState::ok) {
        first = v;
        etag = c;
      }
      if (v.state == fetch::FileState::ok) break;
    }
    fetch::Verification v = first.value_or(fetch::Verification{});  // none there: missing
    fetch::JobResult r;
    r.path = f.path;
    r.sha256 = v.sha256;
    r.git_oid = v.git_oid;
    r.from_stamp = v.from_stamp;
    nlohmann::json fields = {{"size", f.size}, {"bytes_transferred", 0}};
    if (!v.sha256.empty()) fields["sha256"] = v.sha256;
    if (v.state == fetch::FileState::ok) {
      r.outcome = fetch::Outcome::present;
      fields["verified_by"] = v.from_stamp ? "stamp" : "hash";
      out.event("file", "OK", f.path,
                v.from_stamp ? "already in place, unchanged since it was verified" : "already in place and verified",
                false, fields);
    } else {
      r.outcome = fetch::Outcome::failed;
      r.code = ExitCode::check_failed;
      std::string detail = v.state == fetch::FileState::missing
                               ? "not in " + layout.describe() + "; offline, so not downloaded"
                               : mismatch_detail(spec, v);
      r.message = detail;
      out.event("file", fetch::state_name(v.state), f.path, detail, true, fields);
    }
    results.push_back(std::move(r));
    etags.push_back(etag);
  }
  return results;
}

// After the downloads (or the offline check): publish what is verified into
// the layout, assemble, write refs / SHA256SUMS, and say how it went.
// `offline_why`: how the run was told to stay offline; empty when it was not.
int publish_and_assemble(const Manifest& m, hfcache::Layout& layout, const std::vector<fetch::JobResult>& results,
                         const std::vector<std::string>& etags, Reporter& out, const std::string& offline_why) {
  int code = 0;
  std::size_t downloaded = 0, present = 0, failed = 0;
  std::uint64_t transferred = 0;
  std::vector<std::pair<std::string, std::string>> sums;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    transferred += r.bytes_transferred;
    if (r.outcome == fetch::Outcome::present || r.outcome == fetch::Outcome::downloaded) {
      layout.publish(r.path, etags[i]);
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
      job.output = layout.file_path(e.output);
      for (const auto& p : e.parts) job.parts.push_back(layout.file_path(p));
      job.sha256 = e.sha256;
      job.size = e.size;
      job.stamp = stamp_path(layout, "assemble", e.output);
      auto r = fetch::assemble(job);
      nlohmann::json f = {{"size", r.size}, {"sha256", r.sha256}};
      if (r.outcome == fetch::AssembleOutcome::mismatch) {
        ++failed;
        code = worse(code, ExitCode::check_failed);
        f["rejected"] = r.rejected.string();
        out.event("assemble", r.mismatch == fetch::Mismatch::size ? "SIZE MISMATCH" : "SHA256 MISMATCH", e.output,
                  r.message, true, f);
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
  if (failed == 0) layout.finish(sums);

  std::string text =
      failed ? std::to_string(failed) + " of " + std::to_string(m.files.size() + m.assemble.size()) +
                   " files failed; the others are verified in " + layout.describe()
             : "all " + std::to_string(m.files.size()) + " files verified (" + std::to_string(downloaded) +
                   " downloaded, " + std::to_string(present) + " already in place" +
                   (m.assemble.empty() ? "" : ", " + std::to_string(assembled) + " assembled") + ") in " +
                   layout.describe();
  if (!offline_why.empty())
    text += failed ? ". This run was offline (" + offline_why +
                         "), so nothing was downloaded: run hf-fetch again with network access and without " +
                         (offline_why == "--offline" ? "--offline" : "HF_HUB_OFFLINE set") + " to fetch what is missing"
                   : ", offline (" + offline_why + ")";
  nlohmann::json fields = {{"mode", "fetch"}, {"files", m.files.size()}, {"downloaded", downloaded},
                           {"present", present}, {"failed", failed}, {"assembled", assembled},
                           {"bytes_transferred", transferred}, {"location", layout.describe()}, {"exit_code", code}};
  if (!offline_why.empty()) fields["offline"] = true;
  out.summary(fields, text, failed > 0);
  return code;
}

}  // namespace

int run_fetch(const FetchArgs& a, Reporter& out) {
  std::uint64_t max_rate = a.max_rate.empty() ? 0 : parse_rate(a.max_rate);
  Manifest m = Manifest::load(a.manifest);
  auto layout = make_layout(a, m);
  check_no_reserved_paths(m, *layout);
  if (a.verify_only) return verify_only(m, *layout, out);
  if (a.offline) {
    std::string why = a.offline_from_env ? "HF_HUB_OFFLINE is set" : "--offline";
    if (a.check_upstream)
      throw Error(ExitCode::usage, "--check-upstream needs the Hub, but " + why + ": nothing can be checked offline");
    out.note("offline (" + why + "): checking the " + std::to_string(m.files.size()) + " files of " + m.repo.id +
             " at " + m.revision + " in " + layout->describe() + " without the network");
    std::vector<std::string> etags;
    auto results = check_in_place(m, *layout, etags, out);
    return publish_and_assemble(m, *layout, results, etags, out, why);
  }

  std::string endpoint = hub::endpoint_from(a.common.endpoint);
  hub::Token token = hub::find_token(a.common.token_file);
  http::Options ho;
  ho.retry.tries = a.common.retries;
  ho.stall_timeout_s = a.common.stall_timeout_s;
  ho.max_bytes_per_s = max_rate;
  hub::HubClient client(endpoint, token.value, ho);

  // Pre-flight: exactly the manifest's files against the live tree, before a byte is fetched.
  auto tree = client.list_tree(m.repo, m.revision);
  auto checks = compare_with_tree(m, tree);
  refute_names_taken(m, *layout, checks);
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
    const std::string& etag = checks[i].etag;  // decided by compare_with_tree alone
    etags.push_back(etag);
    fetch::FileSpec spec = spec_of(f);
    if (checks[i].git_oid_to_verify) spec.git_oid = checks[i].git_oid_to_verify;
    jobs.push_back({spec, hub::resolve_url(endpoint, m.repo, m.revision, f.path), layout->content_path(f.path, etag),
                    layout->partial_path(f.path, etag), layout->rejected_prefix(f.path, etag),
                    layout->lock_path(f.path, etag), stamp_path(*layout, "verified", f.path)});
    total += f.size;
  }
  out.note("fetching " + std::to_string(jobs.size()) + " files (" + human_bytes(total) + ") of " + m.repo.id + " at " +
           m.revision + " into " + layout->describe());

  fetch::Options fo;
  fo.http = ho;
  fo.max_parallel = a.jobs;
  fo.connections = a.connections;
  if (!a.min_split_size.empty()) {
    fo.min_split_size = hostcheck::parse_size(a.min_split_size);
    if (fo.min_split_size == 0) throw Error(ExitCode::usage, "--min-split-size must be more than 0");
  }
  out.begin_downloads(total, jobs.size());
  hub::HubSource source(m.repo, token.value);
  auto results = fetch::Downloader(fo, source).run(jobs, out);
  return publish_and_assemble(m, *layout, results, etags, out, {});
}

}  // namespace hffetch
