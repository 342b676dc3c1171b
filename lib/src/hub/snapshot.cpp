#include "provkit/hub/snapshot.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "provkit/hub/patterns.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/parallel.hpp"

namespace provkit::hub {

std::unique_ptr<hfcache::Layout> open_layout(const Manifest& m, const fs::path& cache_dir, const fs::path& local_dir) {
  if (!local_dir.empty()) return std::make_unique<hfcache::LocalDirLayout>(local_dir, m.revision);
  return std::make_unique<hfcache::CacheLayout>(cache_dir.empty() ? hfcache::default_hub_cache() : cache_dir, m.repo,
                                                m.revision);
}

std::optional<ReservedPath> find_reserved_path(const Manifest& m, const hfcache::Layout& layout) {
  auto check = [&](const std::string& path, int line) -> std::optional<ReservedPath> {
    if (auto why = layout.reserved_reason(path); !why.empty()) return ReservedPath{path, line, why};
    return std::nullopt;
  };
  for (const auto& f : m.files)
    if (auto r = check(f.path, f.line)) return r;
  for (const auto& a : m.assemble)
    if (auto r = check(a.output, a.line)) return r;
  return std::nullopt;
}

download::FileSpec file_spec(const ManifestFile& f) { return {f.path, f.size, f.sha256, f.git_oid}; }

fs::path stamp_path(const hfcache::Layout& layout, std::string_view kind, const std::string& path) {
  return util::path_with_suffix(layout.state_dir() / kind / path, ".stamp");
}

std::vector<ManifestFile> pin_tree_files(const std::vector<TreeEntry>& tree, const std::vector<std::string>& include,
                                         const std::vector<std::string>& exclude,
                                         const std::function<std::string(const TreeEntry&)>& fetch_small,
                                         const std::function<void(const ManifestFile&, const TreeEntry&)>& on_added) {
  std::vector<ManifestFile> files;
  for (const auto& e : tree) {
    if (!e.is_file()) continue;
    if (!selected_by_patterns(e.path, include, exclude)) continue;
    if (!is_safe_relative_path(e.path))
      throw Error(ExitCode::network, "the Hub's tree names an unusable path '" + e.path + "'");
    ManifestFile f;
    f.path = e.path;
    f.size = e.content_size();
    if (e.lfs) {
      f.sha256 = e.lfs->oid;
    } else if (!fetch_small) {
      f.git_oid = e.oid;  // the tree's id; the fetch checks the content against it
    } else {
      std::string content = fetch_small(e);
      std::string oid = util::git_blob_id(content);
      if (content.size() != e.size || oid != e.oid)
        throw Error(ExitCode::network, e.path + ": the Hub's tree says " + std::to_string(e.size) + " bytes, git oid " +
                                           e.oid + ", but its content is " + std::to_string(content.size()) +
                                           " bytes, git oid " + oid);
      f.sha256 = util::sha256_hex(content);
      f.git_oid = oid;
    }
    on_added(f, e);
    files.push_back(std::move(f));
  }
  return files;
}

VerifySummary verify_snapshot(const Manifest& m, const hfcache::Layout& layout, SnapshotObserver& observer) {
  std::vector<FileCheck> items;
  DroppedParts dropped = find_dropped_parts(m, layout, false);
  for (const auto& f : m.files) {
    FileCheck c{f.path, file_spec(f), {}, {}};
    if (const auto* out = dropped.output_of(f.path)) {
      c.dropped_into = *out;
      c.verification.state = download::FileState::ok;
    }
    items.push_back(std::move(c));
  }
  for (const auto& a : m.assemble) {
    if (!a.sha256 && !a.size) continue;
    download::FileSpec spec{a.output, a.size.value_or(0), a.sha256, std::nullopt};
    if (!a.size) {  // size unknown: compare the hash only (a missing file stays MISSING)
      std::error_code ec;
      auto sz = fs::file_size(layout.file_path(a.output), ec);
      spec.size = ec ? 0 : sz;
    }
    items.push_back({a.output, spec, {}, {}});
  }
  // sha256 is sequential within a file, so files go in parallel; the events
  // keep manifest order.
  VerifySummary summary;
  std::vector<bool> done(items.size());
  std::size_t next_to_report = 0;
  std::mutex mu;
  util::parallel_for(items.size(), util::cpu_jobs(), [&](std::size_t i) {
    download::Verification v = items[i].verification;  // a dropped part: nothing to read
    if (items[i].dropped_into.empty()) v = download::verify_file(layout.file_path(items[i].path), items[i].spec);
    std::lock_guard lock(mu);
    items[i].verification = std::move(v);
    done[i] = true;
    for (; next_to_report < items.size() && done[next_to_report]; ++next_to_report) {
      ++summary.files;
      if (items[next_to_report].verification.state != download::FileState::ok) ++summary.failed;
      observer.on_verified(items[next_to_report]);
    }
  });
  return summary;
}

namespace {
// One manifest file at its final place, as check_in_place looks for it: its check (missing when none is there)
// and the blob name the verified content was found under.
struct InPlace {
  FileCheck check;
  std::string etag;
};
InPlace find_in_place(const ManifestFile& f, const hfcache::Layout& layout, const DroppedParts* dropped) {
  InPlace here{{f.path, file_spec(f), {}, {}}, {}};
  if (const auto* into = dropped ? dropped->output_of(f.path) : nullptr) {
    here.check.dropped_into = *into;
    here.check.verification.state = download::FileState::ok;
    return here;
  }
  std::vector<std::string> candidates;
  if (f.git_oid) candidates.push_back(*f.git_oid);
  if (f.sha256) candidates.push_back(*f.sha256);
  std::error_code ec;
  // What a link on disk points at is a name only if it has an id's shape.
  if (auto link = fs::read_symlink(layout.file_path(f.path), ec); !ec) {
    std::string name = link.filename().string();
    if (util::is_hex(name, 40) || util::is_hex(name, 64)) candidates.push_back(name);
  }
  bool found = false;
  for (const auto& c : candidates) {
    fs::path content = layout.content_path(f.path, c);
    if (!fs::exists(content, ec)) continue;
    auto v = download::verify_file_stamped(layout.guard(), content, here.check.spec,
                                           stamp_path(layout, "verified", f.path));
    if (!found || v.state == download::FileState::ok) {
      here.check.verification = v;
      here.etag = c;
      found = true;
    }
    if (v.state == download::FileState::ok) break;
  }
  return here;
}
}  // namespace

SnapshotFiles check_in_place(const Manifest& m, const hfcache::Layout& layout, SnapshotObserver& observer,
                             const DroppedParts* dropped) {
  SnapshotFiles out;
  for (const auto& f : m.files) {
    InPlace here = find_in_place(f, layout, dropped);
    const download::Verification& v = here.check.verification;
    download::JobResult r;
    r.path = f.path;
    r.sha256 = v.sha256;
    r.git_oid = v.git_oid;
    r.from_stamp = v.from_stamp;
    if (v.state == download::FileState::ok) {
      r.outcome = download::Outcome::present;
    } else {
      r.outcome = download::Outcome::failed;
      r.reason = download::FileFailure::not_verified;
    }
    observer.on_checked_in_place(here.check, layout);
    out.results.push_back(std::move(r));
    out.etags.push_back(std::move(here.etag));
  }
  return out;
}

bool all_in_place(const Manifest& m, const hfcache::Layout& layout, const DroppedParts* dropped) {
  return std::all_of(m.files.begin(), m.files.end(), [&](const ManifestFile& f) {
    return find_in_place(f, layout, dropped).check.verification.state == download::FileState::ok;
  });
}

std::vector<UpstreamCheck> check_upstream(const Manifest& m, const hfcache::Layout& layout,
                                          const std::vector<TreeEntry>& tree) {
  auto checks = compare_with_tree(m, tree);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    UpstreamCheck& c = checks[i];
    if (!c.git_oid_to_verify) continue;
    fs::path stored = layout.content_path(c.path, c.etag);
    std::error_code ec;
    if (stored.filename() != c.etag || !fs::is_regular_file(stored, ec)) continue;  // not named by its id
    util::FileDigests d = util::digest_file(stored);
    const ManifestFile& f = m.files[i];
    if (d.git_oid == c.etag && (d.size != f.size || d.sha256 != f.sha256.value_or(d.sha256))) {
      c.state = UpstreamState::changed;
      c.detail = "the tree names its blob " + c.etag + ", but " + stored.string() +
                 " holds other content with that git id";
      c.etag.clear();
      c.git_oid_to_verify.reset();
    }
  }
  return checks;
}

DownloadPlan plan_downloads(const Manifest& m, const hfcache::Layout& layout, const std::vector<UpstreamCheck>& checks,
                            const std::string& endpoint) {
  DownloadPlan plan{&m, &layout, endpoint, {}, {}, {}, 0};
  util::CheckedSum total("the sizes of the files to fetch");
  plan.files.reserve(m.files.size());
  plan.etags.reserve(m.files.size());
  plan.git_oids.reserve(m.files.size());
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    const auto& f = m.files[i];
    plan.files.push_back(i);
    plan.etags.push_back(checks[i].etag);
    plan.git_oids.push_back(checks[i].git_oid_to_verify.value_or(""));
    total.add(f.size, f.path);
  }
  plan.total_bytes = total.value();
  return plan;
}

download::Job DownloadPlan::job(std::size_t k) const {
  const ManifestFile& f = manifest->files[files[k]];
  download::FileSpec spec = file_spec(f);
  if (!git_oids[k].empty()) spec.git_oid = git_oids[k];
  hfcache::StoredPaths stored = layout->stored_paths(f.path, etags[k]);
  return {std::move(spec),
          resolve_url(endpoint, manifest->repo, manifest->revision, f.path),
          std::move(stored.content),
          std::move(stored.partial),
          std::move(stored.rejected_prefix),
          std::move(stored.lock),
          stamp_path(*layout, "verified", f.path),
          layout->guard().dir()};
}

DownloadPlan DownloadPlan::take(const std::vector<std::size_t>& ks) {
  DownloadPlan out{manifest, layout, endpoint, {}, {}, {}, 0};
  out.files.reserve(ks.size());
  out.etags.reserve(ks.size());
  out.git_oids.reserve(ks.size());
  for (std::size_t k : ks) {
    out.files.push_back(files[k]);
    out.etags.push_back(std::move(etags[k]));
    out.git_oids.push_back(std::move(git_oids[k]));
    out.total_bytes += manifest->files[files[k]].size;  // within total_bytes, a checked sum
  }
  return out;
}

namespace {
// The worse of two failures' reasons: the first of the worst exit code.
std::optional<ReasonId> worse(const std::optional<ReasonId>& a, const ReasonId& b) {
  auto rank = [](ExitCode c) {
    return c == ExitCode::auth ? 3 : c == ExitCode::network ? 2 : c == ExitCode::check_failed ? 1 : 0;
  };
  return a && rank(a->code()) >= rank(b.code()) ? a : b;
}
}  // namespace

hfcache::RefPlan plan_refs(const Manifest& m, const std::optional<std::string>& main_commit, bool main_known) {
  hfcache::RefPlan plan;
  if (m.ref) plan.names.push_back(*m.ref);
  if (m.ref == "main") return plan;
  if (main_known) {
    if (main_commit == m.revision) plan.names.emplace_back("main");
  } else {
    plan.main_if_absent = true;
  }
  return plan;
}

namespace {
// An assembly whose parts were dropped earlier: its output verified when they were found dropped
// (find_dropped_parts), so it is as the stamp of an unchanged assembly says.
Assembly assembled_before(const AssembleEntry& e, const hfcache::Layout& layout) {
  Assembly a{&e, {}, true};
  a.result.outcome = download::AssembleOutcome::unchanged;
  a.result.sha256 = *e.sha256;
  std::error_code ec;
  auto size = fs::file_size(layout.file_path(e.output), ec);
  a.result.size = e.size.value_or(ec ? 0 : size);
  return a;
}
}  // namespace

SnapshotSummary publish_snapshot(const Manifest& m, hfcache::Layout& layout, const SnapshotFiles& files,
                                 SnapshotObserver& observer, const hfcache::RefPlan& refs, const PartsPolicy& parts) {
  SnapshotSummary s;
  std::vector<std::pair<std::string, std::string>> sums;
  std::map<std::string, std::string> etags;  // part path -> blob name, for dropping
  auto gone = [&](const std::string& path) { return parts.dropped && parts.dropped->contains(path); };
  for (std::size_t i = 0; i < files.results.size(); ++i) {
    const auto& r = files.results[i];
    s.bytes_transferred += r.bytes_transferred;
    if (r.outcome == download::Outcome::present || r.outcome == download::Outcome::downloaded) {
      (r.outcome == download::Outcome::present ? s.present : s.downloaded)++;
      if (gone(r.path)) {  // dropped: published nowhere, in no checksum list
        if (r.outcome == download::Outcome::present) ++s.dropped_before;
        continue;
      }
      layout.publish(r.path, files.etags[i]);
      etags[r.path] = files.etags[i];
      sums.emplace_back(r.path, r.sha256);
      try {  // a part fetched again is no longer dropped
        layout.guard().remove(drop_record_path(layout, r.path));
      } catch (const Error&) {}
    } else {
      ++s.failed;
      s.reason = worse(s.reason, r.reason.value_or(download::FileFailure::network));
    }
  }
  // Assembly needs every file; it is skipped when one failed.
  std::set<std::string> dropped_now;
  if (s.failed == 0) {
    std::vector<bool> verified;  // per assembly so far: its output matched a known sha256
    for (std::size_t i = 0; i < m.assemble.size(); ++i) {
      const auto& e = m.assemble[i];
      bool before = e.sha256 && std::any_of(e.parts.begin(), e.parts.end(), gone);
      Assembly a = before ? assembled_before(e, layout) : Assembly{&e, {}, false};
      if (!before) {
        download::AssembleJob job;
        job.output = layout.file_path(e.output);
        for (const auto& p : e.parts) job.parts.push_back(layout.file_path(p));
        job.sha256 = e.sha256;
        job.size = e.size;
        job.stamp = stamp_path(layout, "assemble", e.output);
        job.root = layout.guard().dir();
        a.result = download::assemble(job);
        if (a.result.outcome == download::AssembleOutcome::refused)
          a.result.message += "; " + gguf_split_advice(e);  // what to do instead, in the one sentence hub keeps
      }
      bool ok = a.result.outcome != download::AssembleOutcome::mismatch &&
                a.result.outcome != download::AssembleOutcome::refused;
      if (!ok) {
        ++s.failed;
        s.reason = worse(s.reason, download::FileFailure::mismatch);
      } else {
        ++(a.result.outcome == download::AssembleOutcome::unchanged ? s.unchanged : s.assembled);
        sums.emplace_back(e.output, a.result.sha256);
      }
      verified.push_back(ok && e.sha256 && a.result.sha256 == *e.sha256);
      observer.on_assembled(a);
      if (!parts.drop_parts || !verified.back()) continue;  // an output that does not verify keeps its parts
      std::vector<std::string> now;
      for (const auto& p : droppable_parts(m, i, verified))
        if (!gone(p) && !dropped_now.count(p)) now.push_back(p);
      if (now.empty()) continue;
      std::string warning;
      for (auto& d : drop_parts(layout, e, a.result.sha256, a.result.size, now, etags, warning)) {
        dropped_now.insert(d.path);
        ++s.dropped;
        s.freed_bytes += d.freed_bytes;
        observer.on_dropped(d);
      }
      (void)warning;  // the output's stamp not written: the next run hashes it once
    }
  }
  std::erase_if(sums, [&](const auto& p) { return dropped_now.count(p.first) != 0; });
  if (s.failed == 0) layout.finish(sums, refs);
  return s;
}

nlohmann::json to_json(const FileCheck& c) {
  nlohmann::json f = {{"size", c.spec.size}};
  if (!c.verification.sha256.empty()) f["sha256"] = c.verification.sha256;
  return f;
}

}  // namespace provkit::hub
