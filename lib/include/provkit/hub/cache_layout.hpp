#pragma once
// Where fetched files live, laid out exactly as huggingface_hub does, so that
// its loaders (HF_HUB_OFFLINE=1) find them:
// - the cache: <cache>/models--org--name/{blobs/<etag>, snapshots/<commit>/<path>
//   (relative symlinks), refs/<rev>};
// - a local dir: <dir>/<path> with <dir>/.cache/huggingface/download/<path>.metadata.
// Both are a Layout, so the download engine does not care which one it fills.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "provkit/checkpoint/hub_cache.hpp"
#include "provkit/hub/client.hpp"
#include "provkit/util/beneath.hpp"

namespace provkit::hub::hfcache {

namespace fs = std::filesystem;

// $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface (one rule with envcheck's reads:
// checkpoint::hf_home, which has no network under it).
using checkpoint::hf_home;
// $HF_HUB_CACHE, else hf_home()/hub.
inline fs::path default_hub_cache() { return checkpoint::hub_cache_dir(); }

// "models--org--name" (datasets--, spaces--).
std::string repo_folder_name(const hub::Repo& repo);

// The symlink target from snapshots/<commit>/<path> to blobs/<etag>:
// "../../blobs/<etag>", one more "../" per directory in `path`.
std::string relative_blob_target(std::string_view path, std::string_view etag);

// The refs a finished snapshot points at its commit, decided as huggingface_hub
// decides them: the name a run resolved (refs/v1 for @v1), and refs/main only
// when main is that commit, so refs/main never moves to another name's older
// commit. `main_if_absent`: main is not known (offline), write refs/main only
// where there is none yet.
struct RefPlan {
  std::vector<std::string> names;
  bool main_if_absent = false;
};

// huggingface_hub's CACHEDIR.TAG (the Cache Directory Tagging Standard), so
// backup tools skip the cache.
inline constexpr std::string_view kCachedirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by huggingface_hub.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n";

// The names one repository file's bytes have in a layout, from its path and its content's etag.
struct StoredPaths {
  // Where verified content is stored (a blob, or the file itself).
  fs::path content;
  // A download in progress, kept across runs; never a name a loader would open.
  fs::path partial;
  // Prefix for content that failed verification: "<prefix>.bad-<sha256>"
  // (named by util::path_with_suffix, as every derived name).
  fs::path rejected_prefix;
  // The lock file held while the content is fetched (huggingface_hub's places:
  // "<cache>/.locks/<repo folder>/<etag>.lock", "<local>/.cache/huggingface/download/<path>.lock").
  fs::path lock;
};

class Layout {
 public:
  virtual ~Layout() = default;
  // The directory manifest paths are relative to (snapshot dir or local dir).
  virtual fs::path root() const = 0;
  // The path a loader opens.
  fs::path file_path(const std::string& path) const { return root() / path; }
  // Where the bytes of `path`, whose content is `etag`, are kept, fetched and locked.
  virtual StoredPaths stored_paths(const std::string& path, const std::string& etag) const = 0;
  // Where its verified content is stored: stored_paths(path, etag).content.
  fs::path content_path(const std::string& path, const std::string& etag) const {
    return stored_paths(path, etag).content;
  }
  // Makes verified content visible at file_path (symlink; metadata file).
  virtual void publish(const std::string& path, const std::string& etag) = 0;
  // Takes a published file away (a dropped part): the snapshot link, and its blob `etag` when no link
  // of the repository's snapshots names it any more (cache); the file and its metadata (local dir).
  // Returns the bytes given back to the file system.
  virtual std::uint64_t remove_file(const std::string& path, const std::string& etag) = 0;
  // Where provkit keeps its own small state (assembly stamps).
  virtual fs::path state_dir() const = 0;
  // Before the first byte of a fetch, where huggingface_hub makes them: the
  // snapshot folder (cache), .cache/huggingface with its .gitignore (local
  // dir), and CACHEDIR.TAG beside them (unwritable: skipped, as it does).
  virtual void begin() = 0;
  // Once all files are in place: refs (cache) or SHA256SUMS (local dir).
  // `sums` are (path, sha256) of every verified file.
  virtual void finish(const std::vector<std::pair<std::string, std::string>>& sums, const RefPlan& refs) = 0;
  // Human words for where the files are.
  virtual std::string describe() const = 0;
  // The directory every read and write of this layout stays below (the
  // cache root, or the local dir), opened without following a link below it.
  const util::Root& guard() const { return guard_; }
  // Why a repository path cannot be placed in this layout (it is, or lies
  // inside, a file the layout writes itself), or empty when it can.
  virtual std::string reserved_reason(const std::string& /*path*/) const { return {}; }

 protected:
  explicit Layout(fs::path guarded) : guard_(std::move(guarded)) {}
  util::Root guard_;
};

class CacheLayout : public Layout {
 public:
  CacheLayout(fs::path cache_root, hub::Repo repo, std::string commit);

  fs::path repo_dir() const { return cache_root_ / repo_folder_name(repo_); }
  fs::path blob_path(const std::string& etag) const { return repo_dir() / "blobs" / etag; }
  fs::path snapshot_dir() const { return repo_dir() / "snapshots" / commit_; }
  fs::path ref_path(const std::string& ref) const { return repo_dir() / "refs" / ref; }
  const fs::path& cache_root() const { return cache_root_; }

  fs::path root() const override { return snapshot_dir(); }
  StoredPaths stored_paths(const std::string& path, const std::string& etag) const override;
  void publish(const std::string& path, const std::string& etag) override;
  std::uint64_t remove_file(const std::string& path, const std::string& etag) override;
  fs::path state_dir() const override { return repo_dir() / ".provkit" / commit_; }
  // Creates snapshots/<commit>/ and <cache>/CACHEDIR.TAG.
  void begin() override;
  // Writes refs/<name> for each of `refs` holding another commit (or none).
  void finish(const std::vector<std::pair<std::string, std::string>>& sums, const RefPlan& refs) override;
  std::string describe() const override;

 private:
  fs::path cache_root_;
  hub::Repo repo_;
  std::string commit_;
};

class LocalDirLayout : public Layout {
 public:
  LocalDirLayout(fs::path dir, std::string commit);

  fs::path metadata_path(const std::string& path) const;
  // Where huggingface_hub and hf-fetch keep their state in a local dir.
  fs::path download_dir() const { return dir_ / ".cache" / "huggingface" / "download"; }
  fs::path root() const override { return dir_; }
  StoredPaths stored_paths(const std::string& path, const std::string& etag) const override;
  // Writes the three-line metadata file (commit, etag, timestamp) and .gitignore.
  void publish(const std::string& path, const std::string& etag) override;
  std::uint64_t remove_file(const std::string& path, const std::string& etag) override;
  fs::path state_dir() const override { return dir_ / ".cache" / "huggingface" / "provkit"; }
  // Creates .cache/huggingface with its .gitignore and CACHEDIR.TAG.
  void begin() override;
  // hf-fetch's own checksum list, where no repo file can be: a repo's own
  // SHA256SUMS is placed as the repo has it.
  fs::path sums_path() const { return dir_ / ".cache" / "huggingface" / "SHA256SUMS"; }
  // Writes sums_path() ("<sha256>  <path>" lines, paths relative to the dir:
  // `sha256sum -c .cache/huggingface/SHA256SUMS` run in it).
  void finish(const std::vector<std::pair<std::string, std::string>>& sums, const RefPlan& refs) override;
  std::string describe() const override;
  // .cache/huggingface with everything under it (and .cache itself, a file
  // there would block it).
  std::string reserved_reason(const std::string& path) const override;

 private:
  fs::path dir_;
  std::string commit_;
};

}  // namespace provkit::hub::hfcache
