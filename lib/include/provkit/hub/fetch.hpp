#pragma once
// One run of `hf-fetch --manifest FILE` over the snapshot steps (snapshot.hpp): --verify-only, --offline
// (check in place, then publish), --check-upstream, or the fetch itself (pre-flight against the live tree,
// plan, download, publish and assemble). The tool gives the flags' values and says the sentences.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "provkit/hub/plan.hpp"
#include "provkit/hub/snapshot.hpp"

namespace provkit::hub {

struct FetchOptions {
  enum class Mode { fetch, verify_only, check_upstream } mode = Mode::fetch;
  bool offline = false;  // fetch without the network: every file must be in place
  bool dry_run = false;  // the pre-flight and the plan (on_space_plan), no blob request
  // Drop the parts of each assembly once its output verifies (drop.hpp); parts dropped earlier are
  // then in place while their output verifies. Without it, dropped parts are fetched again.
  bool drop_parts = false;
  // The tree at the manifest's commit when the caller already listed it (REPO[@REV]); null: listed here.
  const std::vector<TreeEntry>* tree = nullptr;
  std::string endpoint, token_file;  // given values; empty: the environment's (endpoint_from, find_token)
  // Tried in order before the endpoint (--mirror), never sent the token. Each file comes from the first
  // source that serves it right: a mirror whose tree lacks a file, or that serves it wrong or refuses it,
  // still serves the others, and only that file is asked of the next source. A mirror that cannot be
  // listed (down, refusing) is left at once for the rest of the run.
  std::vector<std::string> mirrors;
  // Retries, connect and stall timeouts, max bytes per second. A rerun that needs nothing it does not have
  // (every file in place and verified before any request) asks each source once, within the connect timeout:
  // it only compares, and when no source can be reached it serves the copy here (FetchReport::unreachable).
  http::Options http;
  int jobs = 4, connections = 8;     // files at once, connections per large file
  std::uint64_t min_split_size = 0;  // 0: the default split size
};

// A source a fetch could not use, and why (the error's sentence).
struct SourceFailure {
  std::string url;
  std::string why;
};

// Why a fetch stopped at its pre-flight against the Hub's tree (FetchReport::Stage::upstream), for scripts to
// branch on: --json's "reason".
enum class UpstreamRefusal {
  // 1 "upstream_changed": the tree differs from the manifest (NOT IN HUB TREE, UPSTREAM CHANGED) and the copy
  // here is not whole and verified (or was not looked at: --check-upstream).
  changed,
  // 5 "upstream_moved": the tree differs from the manifest, while every file here is in place and verifies
  // against it: nothing here is wrong, and it can be served as it is (--offline) or the manifest pinned anew.
  moved,
};
std::string_view reason_name(UpstreamRefusal r);
ExitCode exit_code(UpstreamRefusal r);

class FetchObserver : public SnapshotObserver {
 public:
  // A pre-flight result: every one that is not OK, and with Mode::check_upstream every one.
  virtual void on_upstream(const UpstreamCheck&) {}
  // The run turns to this source (a mirror, or the endpoint last).
  virtual void on_source(const std::string& /*url*/, bool /*mirror*/) {}
  // A mirror is left for the next source, and why.
  virtual void on_source_failed(const std::string& /*url*/, const std::string& /*why*/) {}
  // A mirror's tree does not have the file as the manifest pins it: it is asked of the next source.
  virtual void on_source_lacks(const std::string& /*url*/, const UpstreamCheck&) {}
  // Every file is in place and verified and no source could be reached (each asked once): the copy here is
  // served as --offline serves it (on_checked_in_place follows for each file). `failed`: each source and why.
  virtual void on_sources_unreachable(const std::vector<SourceFailure>& /*failed*/) {}
  // The plan on disk, before the disk gate; `dry_run`: it is all the run does.
  virtual void on_space_plan(const SpacePlan&, bool /*dry_run*/) {}
  // The downloads are about to start.
  virtual void on_plan(const Manifest&, const hfcache::Layout&, const DownloadPlan&) {}
};

struct FetchReport {
  // Where the run ended; no_space: the disk gate refused (`space` does not fit), nothing was downloaded.
  enum class Stage { verified, upstream, planned, no_space, published } stage = Stage::published;
  FetchOptions::Mode mode = FetchOptions::Mode::fetch;
  bool offline = false;
  std::string location;                                   // the layout, described
  VerifySummary verified;                                 // Stage::verified
  std::size_t upstream_files = 0, upstream_problems = 0;  // Stage::upstream
  std::size_t files = 0;                                  // Stage::published: the manifest's files
  SnapshotSummary published;                              // Stage::published
  std::optional<SpacePlan> space;  // Stage::planned, no_space, and published after the pre-flight
  // Stage::upstream, a fetch: every file here is in place and verifies against the manifest.
  bool local_copy_verifies = false;
  // Stage::published with `offline`: a rerun that needed nothing it did not have, and no source could be
  // reached; each source and why, in the order tried (the endpoint last).
  std::vector<SourceFailure> unreachable;
  int exit_code() const;
  // Stage::upstream with differences: moved when the copy here verifies (local_copy_verifies), else changed.
  std::optional<UpstreamRefusal> upstream_refusal() const {
    if (stage != Stage::upstream || !upstream_problems) return std::nullopt;
    return local_copy_verifies ? UpstreamRefusal::moved : UpstreamRefusal::changed;
  }
  // The disk gate's refusal, the same in a dry run (Stage::planned) and in the fetch it stopped (no_space).
  std::optional<PlanRefusal> gate() const {
    return (stage == Stage::planned || stage == Stage::no_space) && space ? space->gate() : std::nullopt;
  }
};

// When the plan does not fit the target's free space (the disk gate), returns Stage::no_space with the
// plan before any blob request (FetchReport::gate), as a dry run reports it.
FetchReport fetch_snapshot(const Manifest& m, hfcache::Layout& layout, const FetchOptions& options,
                           FetchObserver& observer);

// A manifest for REPO at `revision` from the Hub's tree, selected by include/exclude globs (pin_tree_files'
// rules): the one way `manifest create` and `hf-fetch REPO[@REV]` pin. LFS files are pinned by the tree's
// sha256. With `Pin::content` (every manifest that is written) each other file is fetched once
// (download_small), checked against the tree's size and git id and pinned by its sha256 as well, so that no
// written manifest trusts SHA-1 alone; with `Pin::tree` (a fetch that keeps its manifest in memory: the
// fetch checks each file against the tree's git id, and a dry run asks for no byte) by the tree's git blob
// id alone. `ref` is the revision when it is a name (ref_for_revision). `tree` receives the listing;
// `on_added` sees each file as it is pinned.
enum class Pin { tree, content };
Manifest pin_from_tree(HubClient& client, const Repo& repo, const std::string& revision,
                       const std::vector<std::string>& include, const std::vector<std::string>& exclude,
                       std::vector<TreeEntry>& tree, Pin pin,
                       const std::function<void(const ManifestFile&, const TreeEntry&)>& on_added = {});

// The fields of hf-fetch's JSON summary (without "event").
nlohmann::json to_json(const FetchReport& report);

}  // namespace provkit::hub
