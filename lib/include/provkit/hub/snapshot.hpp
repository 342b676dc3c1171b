#pragma once
// A manifest's snapshot on disk, step by step (what `hf-fetch --manifest`
// does between its flags and its words): choose the layout, verify what is
// there, check it in place without the network, compare with the Hub's tree,
// plan the downloads, then publish, assemble and finish the layout.
// Everything comes back as data, per file as it happens through a
// SnapshotObserver, in sum as a struct; the tool words it and picks the exit
// code.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/download/downloader.hpp"
#include "provkit/error.hpp"
#include "provkit/hub/cache_layout.hpp"
#include "provkit/hub/client.hpp"
#include "provkit/hub/drop.hpp"
#include "provkit/hub/manifest.hpp"

namespace provkit::hub {

namespace fs = std::filesystem;

// A local dir when `local_dir` is given, else the cache at `cache_dir`
// (empty: hfcache::default_hub_cache()) for the manifest's repo and commit.
std::unique_ptr<hfcache::Layout> open_layout(const Manifest& m, const fs::path& cache_dir, const fs::path& local_dir);

// A manifest path (file or assembly output) the layout writes itself.
struct ReservedPath {
  std::string path;
  int line = 0;
  std::string reason;  // hfcache::Layout::reserved_reason
};
// The first such path, in manifest order (files, then assembly outputs).
std::optional<ReservedPath> find_reserved_path(const Manifest& m, const hfcache::Layout& layout);

download::FileSpec file_spec(const ManifestFile& f);
// Where provkit remembers what it did to a file: kind "verified" (see
// download::verify_file_stamped) or "assemble" (an assembly's inputs).
fs::path stamp_path(const hfcache::Layout& layout, std::string_view kind, const std::string& path);

// One file looked at on disk.
struct FileCheck {
  std::string path;
  download::FileSpec spec;  // what it must be
  download::Verification verification;
  // A part dropped after this assembly output verified (drop.hpp): not there, and not missing.
  std::string dropped_into;
};

// One assembly of split parts.
struct Assembly {
  const AssembleEntry* entry = nullptr;  // into the manifest given
  download::AssembleResult result;
  bool parts_dropped = false;  // its parts were dropped earlier: the output was verified instead
};

// Per-file events, for the tool's display; the download engine's events come
// through the base class.
// hf-fetch's JSON fields of a checked file: size, and sha256 when it was read.
nlohmann::json to_json(const FileCheck& c);

class SnapshotObserver : public download::Observer {
 public:
  // verify_snapshot: each file, in manifest order.
  virtual void on_verified(const FileCheck&) {}
  // check_in_place: each file, in manifest order (`layout`: where it was looked for).
  virtual void on_checked_in_place(const FileCheck&, const hfcache::Layout& /*layout*/) {}
  // publish_snapshot: each assembly done or refused.
  virtual void on_assembled(const Assembly&) {}
  // publish_snapshot: each part dropped after its assembly verified.
  virtual void on_dropped(const DroppedPart&) {}
};

// ---- pinning: a manifest's files from the Hub's tree ---------------------

// The tree's files matching an `include` pattern (all when none is given) and
// no `exclude` pattern (selected_by_patterns, hub/patterns.hpp), in tree order. An LFS file is pinned by the tree's
// sha256; any other is fetched with `fetch_small`, hashed, and its size and git id checked against the tree (no
// `fetch_small`: pinned by the tree's git id alone). `on_added` sees each file as it is pinned. Throws Error(network)
// for an unusable path or content the tree does not describe; an empty result is the caller's to refuse.
std::vector<ManifestFile> pin_tree_files(const std::vector<TreeEntry>& tree, const std::vector<std::string>& include,
                                         const std::vector<std::string>& exclude,
                                         const std::function<std::string(const TreeEntry&)>& fetch_small,
                                         const std::function<void(const ManifestFile&, const TreeEntry&)>& on_added);

// ---- verification (no network, never trusts a stamp) ----------------------

struct VerifySummary {
  std::size_t files = 0;   // files and assembly outputs with a size or sha256
  std::size_t failed = 0;  // not OK
};
// Every file of the manifest, and every assembly output the manifest says
// what it must be (without a size: the hash alone), one file per core at
// once; on_verified in manifest order, each as soon as it and those before
// it are done. A part dropped after its assembly (a record, and no file)
// is OK with FileCheck::dropped_into set; its output is verified on its own.
VerifySummary verify_snapshot(const Manifest& m, const hfcache::Layout& layout, SnapshotObserver& observer);

// ---- the files and their blob names, before publishing ---------------------

// results[i] and etags[i] are the manifest's files[i]; an etag is the blob
// name the content is (or is to be) stored under, empty where none is.
struct SnapshotFiles {
  std::vector<download::JobResult> results;
  std::vector<std::string> etags;
};

// Offline: every file must already be at its final place and verify (a
// verified stamp vouches for an unchanged file). The blob's name is not known
// without the Hub's tree, so the names it can have are tried: the git oid
// (plain git files), the sha256 (LFS files), and what the snapshot link
// already points at. A file not OK is Outcome::failed with
// ExitCode::check_failed (its verification says why).
// Parts in `dropped` are present (FileCheck::dropped_into) without a file.
SnapshotFiles check_in_place(const Manifest& m, const hfcache::Layout& layout, SnapshotObserver& observer,
                             const DroppedParts* dropped = nullptr);
// Whether every file of `m` is in place and verifies, by check_in_place's rule (no event; a verified stamp
// vouches, a file without one is hashed once and stamped); stops at the first that is not.
bool all_in_place(const Manifest& m, const hfcache::Layout& layout, const DroppedParts* dropped = nullptr);

// The pre-flight: compare_with_tree, and then a blob name only the tree
// vouches for (the manifest pins the file by sha256 alone) that is already
// taken, in a cache shared with other commits, by content that truly has that
// git id: the tree is wrong about the file, which is `changed` (that blob is
// left alone, not moved aside as a wrong copy).
std::vector<UpstreamCheck> check_upstream(const Manifest& m, const hfcache::Layout& layout,
                                          const std::vector<TreeEntry>& tree);

// What a fetch downloads: per planned file, its manifest file and what the pre-flight decided. The jobs
// themselves (six paths and a URL each) are made on use, one at a time (job(), jobs()), so that a plan of
// 300,000 files holds 300,000 blob names rather than 300,000 jobs. The manifest and layout must outlive it.
struct DownloadPlan {
  const Manifest* manifest = nullptr;
  const hfcache::Layout* layout = nullptr;
  std::string endpoint;
  std::vector<std::size_t> files;     // index into manifest->files, in order
  std::vector<std::string> etags;     // decided by the pre-flight alone
  std::vector<std::string> git_oids;  // a git id the pre-flight wants verified besides the pins; "" none
  std::uint64_t total_bytes = 0;

  std::size_t size() const { return files.size(); }
  download::Job job(std::size_t k) const;
  download::JobList jobs() const {
    return {size(), [this](std::size_t k) { return job(k); }};
  }
  // The plan of the files at `ks` (positions in this one), in that order; their etags move there.
  DownloadPlan take(const std::vector<std::size_t>& ks);
};
// `checks`: check_upstream's, all OK. One entry per manifest file, in order.
DownloadPlan plan_downloads(const Manifest& m, const hfcache::Layout& layout, const std::vector<UpstreamCheck>& checks,
                            const std::string& endpoint);

// ---- publishing ------------------------------------------------------------

struct SnapshotSummary {
  std::size_t downloaded = 0, present = 0, failed = 0;
  std::size_t assembled = 0;       // outputs written by this run
  std::size_t unchanged = 0;       // outputs in place as an earlier run left them (nothing written)
  std::size_t dropped_before = 0;  // of `present`: parts an earlier run dropped, their outputs verified
  std::size_t dropped = 0;         // parts dropped in this run
  std::uint64_t freed_bytes = 0;   // the disk they gave back
  std::uint64_t bytes_transferred = 0;
  // The worst of the failures (auth outranks network, which outranks check_failed), the first of its kind.
  std::optional<ReasonId> reason;
  ExitCode code() const { return reason ? reason->code() : ExitCode::ok; }
};
// What publishing does with split parts: `dropped` are parts already gone
// (find_dropped_parts, outputs verified), published nowhere and listed in no
// SHA256SUMS; with `drop_parts`, the parts of each output that verified
// against a known sha256 are dropped (drop.hpp) right after its assembly.
struct PartsPolicy {
  bool drop_parts = false;
  const DroppedParts* dropped = nullptr;
};
// Publishes every verified file into the layout; when none failed, assembles
// (on_assembled for each) and, when none of those failed either, finishes the
// layout (`refs`, SHA256SUMS).
SnapshotSummary publish_snapshot(const Manifest& m, hfcache::Layout& layout, const SnapshotFiles& files,
                                 SnapshotObserver& observer, const hfcache::RefPlan& refs,
                                 const PartsPolicy& parts = {});

// The refs a snapshot of `m` gets: m.ref when it names one, and main when
// `main_known` and `main_commit` (the Hub's main now; none: the Hub has no
// main) is m.revision; with main not known (offline), main only where
// refs/main is absent.
hfcache::RefPlan plan_refs(const Manifest& m, const std::optional<std::string>& main_commit, bool main_known);

}  // namespace provkit::hub
