#pragma once
// One run of `hf-fetch --manifest FILE` over the snapshot steps (snapshot.hpp): --verify-only, --offline
// (check in place, then publish), --check-upstream, or the fetch itself (pre-flight against the live tree,
// plan, download, publish and assemble). The tool gives the flags' values and says the sentences.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "provkit/hub/snapshot.hpp"

namespace provkit::hub {

struct FetchOptions {
  enum class Mode { fetch, verify_only, check_upstream } mode = Mode::fetch;
  bool offline = false;                 // fetch without the network: every file must be in place
  std::string endpoint, token_file;     // given values; empty: the environment's (endpoint_from, find_token)
  http::Options http;                   // retries, stall timeout, max bytes per second
  int jobs = 4, connections = 8;        // files at once, connections per large file
  // Asked only when files are to be downloaded (after the pre-flight); 0: the default split size.
  std::function<std::uint64_t()> min_split_size;
};

class FetchObserver : public SnapshotObserver {
 public:
  // A pre-flight result: every one that is not OK, and with Mode::check_upstream every one.
  virtual void on_upstream(const UpstreamCheck&) {}
  // The downloads are about to start.
  virtual void on_plan(const Manifest&, const hfcache::Layout&, const DownloadPlan&) {}
};

struct FetchReport {
  enum class Stage { verified, upstream, published } stage = Stage::published;  // where the run ended
  FetchOptions::Mode mode = FetchOptions::Mode::fetch;
  bool offline = false;
  std::string location;             // the layout, described
  VerifySummary verified;           // Stage::verified
  std::size_t upstream_files = 0, upstream_problems = 0;  // Stage::upstream
  std::size_t files = 0;            // Stage::published: the manifest's files
  SnapshotSummary published;        // Stage::published
  int exit_code() const;
};

FetchReport fetch_snapshot(const Manifest& m, hfcache::Layout& layout, const FetchOptions& options,
                           FetchObserver& observer);

// The fields of hf-fetch's JSON summary (without "event").
nlohmann::json to_json(const FetchReport& report);

}  // namespace provkit::hub
