#include "provkit/hub/cache_layout.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::hub::hfcache {

fs::path hf_home() {
  if (auto v = util::getenv_str("HF_HOME"); !v.empty()) return v;
  if (auto v = util::getenv_str("XDG_CACHE_HOME"); !v.empty()) return fs::path(v) / "huggingface";
  auto home = util::getenv_str("HOME");
  return fs::path(home.empty() ? "/root" : home) / ".cache" / "huggingface";
}

fs::path default_hub_cache() {
  if (auto v = util::getenv_str("HF_HUB_CACHE"); !v.empty()) return v;
  return hf_home() / "hub";
}

std::string repo_folder_name(const hub::Repo& repo) {
  std::string out = hub::repo_type_name(repo.type) + "s--";
  for (char c : repo.id) {
    if (c == '/') out += "--";
    else out += c;
  }
  return out;
}

std::string relative_blob_target(std::string_view path, std::string_view etag) {
  std::string up = "../../";
  for (char c : path)
    if (c == '/') up += "../";
  return up + "blobs/" + std::string(etag);
}

namespace {
void make_parent(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) throw Error(ExitCode::check_failed, p.parent_path().string() + ": cannot create directory: " + ec.message());
}
// Written once, never over another; a cache that cannot take it works without it.
void write_cachedir_tag(const fs::path& dir) {
  std::error_code ec;
  fs::path tag = dir / "CACHEDIR.TAG";
  if (fs::exists(tag, ec)) return;
  try {
    util::write_file_atomic(tag, std::string(kCachedirTag));
  } catch (const Error&) {
  }
}
}  // namespace

fs::path Layout::lock_path(const std::string& path, const std::string& etag) const {
  return util::path_with_suffix(partial_path(path, etag), ".lock");
}

// ---- cache -------------------------------------------------------------------

CacheLayout::CacheLayout(fs::path cache_root, hub::Repo repo, std::string commit)
    : cache_root_(std::move(cache_root)), repo_(std::move(repo)), commit_(std::move(commit)) {}

fs::path CacheLayout::content_path(const std::string&, const std::string& etag) const { return blob_path(etag); }

fs::path CacheLayout::partial_path(const std::string&, const std::string& etag) const {
  // Not huggingface_hub's own "<etag>.incomplete" (its older versions append to
  // that name without verifying), but ending ".incomplete" as its unique
  // temporaries do, so scan_cache_dir lists an interrupted fetch as incomplete.
  return util::path_with_suffix(blob_path(etag), ".provkit-partial.incomplete");
}

fs::path CacheLayout::rejected_prefix(const std::string&, const std::string& etag) const { return blob_path(etag); }

fs::path CacheLayout::lock_path(const std::string&, const std::string& etag) const {
  return util::path_with_suffix(cache_root_ / ".locks" / repo_folder_name(repo_) / etag, ".lock");
}

void CacheLayout::publish(const std::string& path, const std::string& etag) {
  fs::path link = file_path(path);
  make_parent(link);
  std::string target = relative_blob_target(path, etag);
  std::error_code ec;
  if (fs::is_symlink(link, ec) && fs::read_symlink(link, ec) == target) return;
  // Replace atomically: a new link beside it, renamed over the old one.
  fs::path tmp = util::temp_path_beside(link, "link");
  fs::create_symlink(target, tmp, ec);
  if (ec) throw Error(ExitCode::check_failed, tmp.string() + ": cannot create symlink: " + ec.message());
  util::rename_durable(tmp, link);
}

void CacheLayout::begin() {
  std::error_code ec;
  fs::create_directories(snapshot_dir(), ec);
  if (ec) throw Error(ExitCode::check_failed, snapshot_dir().string() + ": cannot create directory: " + ec.message());
  write_cachedir_tag(cache_root_);
}

void CacheLayout::finish(const std::vector<std::pair<std::string, std::string>>&, const RefPlan& refs) {
  std::error_code ec;
  auto write = [&](const std::string& name) {
    fs::path ref = ref_path(name);
    if (fs::exists(ref, ec)) {
      try {
        if (util::read_file(ref) == commit_) return;  // as huggingface_hub: no write when it holds the commit
      } catch (const Error&) {
      }
    }
    util::write_file_atomic(ref, commit_);
  };
  for (const auto& name : refs.names) write(name);
  bool main_named = std::find(refs.names.begin(), refs.names.end(), "main") != refs.names.end();
  if (refs.main_if_absent && !main_named && !fs::exists(ref_path("main"), ec)) write("main");
}

std::string CacheLayout::describe() const { return snapshot_dir().string(); }

// ---- local dir -----------------------------------------------------------------

LocalDirLayout::LocalDirLayout(fs::path dir, std::string commit) : dir_(std::move(dir)), commit_(std::move(commit)) {}

fs::path LocalDirLayout::metadata_path(const std::string& path) const {
  return util::path_with_suffix(download_dir() / path, ".metadata");
}

fs::path LocalDirLayout::content_path(const std::string& path, const std::string&) const { return file_path(path); }

fs::path LocalDirLayout::partial_path(const std::string& path, const std::string& etag) const {
  return util::path_with_suffix(download_dir() / path, "." + etag + ".provkit-partial");
}

fs::path LocalDirLayout::rejected_prefix(const std::string& path, const std::string&) const {
  return download_dir() / path;
}

fs::path LocalDirLayout::lock_path(const std::string& path, const std::string&) const {
  return util::path_with_suffix(download_dir() / path, ".lock");
}

void LocalDirLayout::begin() {
  fs::path state = dir_ / ".cache" / "huggingface";
  std::error_code ec;
  if (!fs::exists(state / ".gitignore", ec)) util::write_file_atomic(state / ".gitignore", "*");
  write_cachedir_tag(state);
}

void LocalDirLayout::publish(const std::string& path, const std::string& etag) {
  fs::path gitignore = dir_ / ".cache" / "huggingface" / ".gitignore";
  std::error_code ec;
  if (!fs::exists(gitignore, ec)) util::write_file_atomic(gitignore, "*");
  // huggingface_hub trusts the metadata while the file's mtime is not newer
  // than the timestamp (plus a second); write it after the file is in place.
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  char ts[64];
  std::snprintf(ts, sizeof ts, "%.6f", now);
  util::write_file_atomic(metadata_path(path), commit_ + "\n" + etag + "\n" + ts + "\n");
}

void LocalDirLayout::finish(const std::vector<std::pair<std::string, std::string>>& sums, const RefPlan&) {
  auto sorted = sums;
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  for (const auto& [path, sha] : sorted) text += sha + "  " + path + "\n";
  util::write_file_atomic(sums_path(), text);
}

std::string LocalDirLayout::describe() const { return dir_.string(); }

std::string LocalDirLayout::reserved_reason(const std::string& path) const {
  if (path == ".cache" || path == ".cache/huggingface" || path.starts_with(".cache/huggingface/"))
    return "the download state of hf-fetch and huggingface_hub is kept under .cache/huggingface";
  return {};
}

}  // namespace provkit::hub::hfcache
