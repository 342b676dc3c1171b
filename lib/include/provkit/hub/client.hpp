#pragma once
// A client for the Hugging Face Hub's HTTP API (the part hf-fetch needs):
// revision info, recursive tree listings across Link pages, resolve URLs,
// small file downloads. Errors become provkit::Error with the exit code a user of
// the tool needs: 4 for access refused, 1 for a revision or file that is not
// there, 3 for network or upstream failures after retries.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/checkpoint/hub_cache.hpp"
#include "provkit/error.hpp"
#include "provkit/http/http.hpp"

namespace provkit::hub {

enum class RepoType { model, dataset, space };

// "model" / "dataset" / "space"; parse returns nullopt for anything else.
std::string repo_type_name(RepoType type);
std::optional<RepoType> parse_repo_type(std::string_view name);

// True for "name" or "org/name" with the characters the Hub allows (the cache's rule, envcheck's too).
using checkpoint::is_valid_repo_id;

struct Repo {
  RepoType type = RepoType::model;
  std::string id;  // "org/name"
};

// Percent-encoding as huggingface_hub does it: revisions with no safe
// character ("refs/pr/1" -> "refs%2Fpr%2F1"), paths keeping '/'.
std::string encode_revision(std::string_view revision);
std::string encode_path(std::string_view path);

// URL building (endpoint without trailing slash).
std::string api_prefix(const Repo& repo);  // "/api/models/org/name"
std::string resolve_url(const std::string& endpoint, const Repo& repo, std::string_view revision,
                        std::string_view path);
std::string tree_url(const std::string& endpoint, const Repo& repo, std::string_view revision);
std::string revision_url(const std::string& endpoint, const Repo& repo, std::string_view revision);

struct LfsInfo {
  std::string oid;  // sha256, 64 hex
  std::uint64_t size = 0;
  std::uint64_t pointer_size = 0;
};

struct TreeEntry {
  std::string type;  // "file" or "directory"
  std::string path;
  std::uint64_t size = 0;
  std::string oid;  // git blob id (of the pointer file for LFS files)
  std::optional<LfsInfo> lfs;

  bool is_file() const { return type == "file"; }
  // The content's size (the LFS object's for LFS files).
  std::uint64_t content_size() const { return lfs ? lfs->size : size; }
  // The name huggingface_hub gives the blob: sha256 for LFS files, git oid for the rest.
  std::string etag() const { return lfs ? lfs->oid : oid; }
};

// One page of a tree listing (a JSON array). Pure; throws provkit::Error
// (network: the upstream answer is malformed) naming what is wrong. A file's
// `oid` must be 40 and an `lfs.oid` 64 lower-case hex digits (they name files
// on disk); a folder's oid, when there, 40.
std::vector<TreeEntry> parse_tree_page(std::string_view json_text);

// The Hub endpoint: `flag` if given, else HF_ENDPOINT, else https://huggingface.co;
// trailing slashes stripped. Throws Error(usage) for something that is not an http(s) URL.
std::string endpoint_from(const std::string& flag);

// HF_HUB_OFFLINE is set true, read the way huggingface_hub reads a boolean: 1, ON, YES or TRUE, in any case.
using checkpoint::offline_from_env;

// The token and where it came from ("HF_TOKEN", "HF_TOKEN_PATH (F)", a file's path), in huggingface_hub's
// order: `token_file` (a file the caller names, as its `token=` argument), else HF_TOKEN, else
// HUGGING_FACE_HUB_TOKEN, else the token file (HF_TOKEN_PATH, else $HF_HOME/token). An empty result means
// none. A named `token_file` that cannot be read, or a token with a control character inside (after
// trimming the ends), is an Error(usage) naming the source, never the token.
struct Token {
  std::string value;
  std::string source;
};
Token find_token(const std::string& token_file);

class HubClient {
 public:
  // `token.source` names it in refusals (never the token); empty value: none.
  HubClient(std::string endpoint, Token token, http::Options options = {});

  // The commit a revision (branch, tag or commit) resolves to. A full commit id (40 lower-case hex, as
  // huggingface_hub's REGEX_COMMIT_HASH) resolves to itself: an answer naming another commit is
  // Error(HubRefusal::commit_mismatch), never fetched.
  std::string resolve_commit(const Repo& repo, const std::string& revision);
  // Every entry of the tree at `revision`, recursively, all pages. Bounded:
  // at most kMaxTreeEntries entries, kMaxTreePages pages and kMaxTreeBytes of
  // listing in all (each page also within http::Options::max_body_bytes); more
  // is Error(network). The bounds are what the memory of a run allows: a fetch
  // holds about 6.5 KB per selected file until it ends (the listing, the pinned
  // manifest, the pre-flight and each file's planned paths; bench/hf-fetch-tree.sh),
  // so 500,000 files are about 3.3 GB; the Hub's entries are about 250 bytes
  // of listing, so 128 MiB is 500,000 of them with paths of over 100 bytes.
  static constexpr std::size_t kMaxTreeEntries = 500'000;
  static constexpr std::size_t kMaxTreePages = 2000;
  static constexpr std::uint64_t kMaxTreeBytes = 128ull << 20;
  std::vector<TreeEntry> list_tree(const Repo& repo, const std::string& revision);
  // A whole (small) file's content.
  std::string download_small(const Repo& repo, const std::string& revision, const std::string& path);

  const std::string& endpoint() const { return endpoint_; }
  const std::string& token() const { return token_; }
  const std::string& token_source() const { return token_source_; }
  const http::Options& options() const { return client_.options(); }

 private:
  // Non-2xx final answer -> Error with exit code and sentence naming the repo.
  [[noreturn]] void fail(const Repo& repo, const std::string& what, const http::Response& response) const;
  std::string get_json(const Repo& repo, const std::string& url, const std::string& what,
                       http::Response* out = nullptr);

  std::string endpoint_;
  std::string token_, token_source_;
  http::Client client_;
};

// Why the Hub refused, for callers to branch on (Error::is): a tool adds its own advice to the sentence (the
// flag that gives a token). The names are the shared reasons these refusals always had in --json
// (docs/json.md): auth, check_failed, network.
enum class HubRefusal {
  gated,                 // 4: a gated repository, and no token with access to it
  not_found_or_private,  // 4: RepoNotFound or 401: no such repository, or a private one the token cannot see
  access_refused,        // 4: HTTP 403
  revision_not_found,    // 1: the repository has no such revision
  entry_not_found,       // 1: no such file at that revision (404)
  upstream,              // 3: any other refusal (5xx, 429 after retries, ...)
  commit_mismatch,       // 3: asked for a full commit id, the Hub's answer names another commit
};
std::string_view reason_name(HubRefusal r);
ExitCode exit_code(HubRefusal r);

// The sentence and typed reason (HubRefusal) for a refused Hub answer (status + X-Error-Code).
// `what` names the thing asked for ("the tree at <rev>"); `token_source`
// (empty: no token was sent) picks the advice and is named in it.
Error hub_error(const Repo& repo, const std::string& what, long status, const http::Headers& headers,
                const std::string& token_source);

}  // namespace provkit::hub
