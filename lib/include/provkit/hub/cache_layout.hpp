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

#include "provkit/hub/client.hpp"
#include "provkit/util/beneath.hpp"

namespace provkit::hub::hfcache {

namespace fs = std::filesystem;

// $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
fs::path hf_home();
// $HF_HUB_CACHE, else hf_home()/hub.
fs::path default_hub_cache();

// "models--org--name" (datasets--, spaces--).
std::string repo_folder_name(const hub::Repo& repo);

// The symlink target from snapshots/<commit>/<path> to blobs/<etag>:
// "../../blobs/<etag>", one more "../" per directory in `path`.
std::string relative_blob_target(std::string_view path, std::string_view etag);

class Layout {
 public:
  virtual ~Layout() = default;
  // The directory manifest paths are relative to (snapshot dir or local dir).
  virtual fs::path root() const = 0;
  // The path a loader opens.
  fs::path file_path(const std::string& path) const { return root() / path; }
  // Where verified content is stored (a blob, or the file itself).
  virtual fs::path content_path(const std::string& path, const std::string& etag) const = 0;
  // A download in progress, kept across runs; never a name a loader would open.
  virtual fs::path partial_path(const std::string& path, const std::string& etag) const = 0;
  // Prefix for content that failed verification: "<prefix>.bad-<sha256>"
  // (named by util::path_with_suffix, as every derived name).
  virtual fs::path rejected_prefix(const std::string& path, const std::string& etag) const = 0;
  // The lock file held while the content is fetched (huggingface_hub's places:
  // "<cache>/.locks/<repo folder>/<etag>.lock", "<local>/.cache/huggingface/download/<path>.lock").
  virtual fs::path lock_path(const std::string& path, const std::string& etag) const;
  // Makes verified content visible at file_path (symlink; metadata file).
  virtual void publish(const std::string& path, const std::string& etag) = 0;
  // Where provkit keeps its own small state (assembly stamps).
  virtual fs::path state_dir() const = 0;
  // Once all files are in place: refs (cache) or SHA256SUMS (local dir).
  // `sums` are (path, sha256) of every verified file.
  virtual void finish(const std::vector<std::pair<std::string, std::string>>& sums) = 0;
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
  fs::path content_path(const std::string& path, const std::string& etag) const override;
  fs::path partial_path(const std::string& path, const std::string& etag) const override;
  fs::path rejected_prefix(const std::string& path, const std::string& etag) const override;
  fs::path lock_path(const std::string& path, const std::string& etag) const override;
  void publish(const std::string& path, const std::string& etag) override;
  fs::path state_dir() const override { return repo_dir() / ".provkit" / commit_; }
  // Writes refs/main with the pinned commit: loaders asked for the repo id
  // alone read refs/main, and on this box the pin is what "main" means.
  void finish(const std::vector<std::pair<std::string, std::string>>& sums) override;
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
  fs::path content_path(const std::string& path, const std::string& etag) const override;
  fs::path partial_path(const std::string& path, const std::string& etag) const override;
  fs::path rejected_prefix(const std::string& path, const std::string& etag) const override;
  fs::path lock_path(const std::string& path, const std::string& etag) const override;
  // Writes the three-line metadata file (commit, etag, timestamp) and .gitignore.
  void publish(const std::string& path, const std::string& etag) override;
  fs::path state_dir() const override { return dir_ / ".cache" / "huggingface" / "provkit"; }
  // Writes SHA256SUMS ("<sha256>  <path>" lines, as sha256sum -c reads them).
  void finish(const std::vector<std::pair<std::string, std::string>>& sums) override;
  std::string describe() const override;
  // SHA256SUMS, and .cache/huggingface with everything under it (and
  // .cache itself, a file there would block it).
  std::string reserved_reason(const std::string& path) const override;

 private:
  fs::path dir_;
  std::string commit_;
};

}  // namespace provkit::hub::hfcache
