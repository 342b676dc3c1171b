#pragma once
// The fleet mirror: a static tree that nginx serves as a Hub endpoint for
// exactly the pinned commits of some manifests, made from a Hugging Face
// cache that hf-fetch filled. Every exported file is re-verified (size,
// sha256, git blob id) after it is linked or copied into the tree; one that
// does not match refuses the whole export and nothing is replaced.
//
// Layout of DIR (the URL paths hf-fetch's HubClient requests; nginx ignores
// the query strings):
//   DIR/root/api/<type>s/<repo>/revision/<commit>    revision info JSON
//   DIR/root/api/<type>s/<repo>/tree/<commit>        recursive tree listing JSON (one page)
//   DIR/root/[datasets/|spaces/]<repo>/resolve/<commit>/<path>   the file (hard link to the cache blob, else a copy)
//   DIR/nginx-provkit-mirror.conf                    `location` blocks to include in a `server {}`:
//     per-file `location =` blocks add the Hub's headers (ETag, X-Repo-Commit,
//     and X-Linked-Etag / X-Linked-Size for LFS files); nginx answers Range itself.
// LFS files are served directly at the resolve URL (no redirect), as the Hub
// does for small files; clients read X-Linked-Etag or ETag alike.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "provkit/hub/manifest.hpp"

namespace provkit::hub::mirror {

namespace fs = std::filesystem;

struct ExportedFile {
  std::string repo;  // "org/name"
  std::string commit;
  std::string path;      // in the repository
  std::string url_path;  // "/org/name/resolve/<commit>/<path>" (not percent-encoded)
  std::uint64_t size = 0;
  std::string sha256;
  std::string git_oid;  // of the content
  bool lfs = false;
  bool linked = false;  // hard link (else a copy)
};

struct ExportResult {
  fs::path root;        // DIR/root
  fs::path nginx_conf;  // DIR/nginx-provkit-mirror.conf
  std::vector<ExportedFile> files;
  std::uint64_t bytes = 0;
  std::size_t linked = 0, copied = 0;
};

// Name of the configuration snippet written into DIR.
inline constexpr const char* kNginxConfName = "nginx-provkit-mirror.conf";

// Exports the files of `manifests` from the cache at `cache_root` into `to`.
// `to` must be absent, empty, or an earlier export (it is replaced).
// Throws Error(check_failed) naming the file for anything missing or not
// matching its manifest, Error(usage) for an unusable `to`.
ExportResult export_tree(const std::vector<Manifest>& manifests, const fs::path& cache_root, const fs::path& to);

// The nginx `location` blocks serving `files` from `root` (pure; for tests).
std::string nginx_locations(const std::vector<ExportedFile>& files, const std::vector<Manifest>& manifests,
                            const fs::path& root);

// The git blob id of the LFS pointer file the Hub stores for an LFS object,
// and that pointer's size: what the tree reports as `oid` / `pointerSize`.
std::string lfs_pointer_text(const std::string& sha256, std::uint64_t size);

// hf-fetch's JSON: an exported file's event fields, and the export's summary fields (without "event").
nlohmann::json to_json(const ExportedFile& f);
nlohmann::json to_json(const ExportResult& r);

}  // namespace provkit::hub::mirror
