#include "provkit/hub/cache_layout.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "provkit/checkpoint/hub_cache.hpp"
#include "provkit/download/blob_lock.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::hub::hfcache {

namespace {
// A ref holds one commit id; a planted huge file is not read.
constexpr std::size_t kRefMax = 4096;
}  // namespace

std::string repo_folder_name(const hub::Repo& repo) {
  return checkpoint::cache_folder_name(hub::repo_type_name(repo.type), repo.id);
}

std::string relative_blob_target(std::string_view path, std::string_view etag) {
  std::string up = "../../";
  for (char c : path)
    if (c == '/') up += "../";
  return up + "blobs/" + std::string(etag);
}

namespace {
// Written once, never over another; a cache that cannot take it works without it (as huggingface_hub).
void write_cachedir_tag(const util::Root& guard, const fs::path& dir) {
  try {
    struct stat st;
    if (guard.stat(dir / "CACHEDIR.TAG", st)) return;
    guard.write_atomic(dir / "CACHEDIR.TAG", kCachedirTag);
  } catch (const Error&) {}
}
}  // namespace

// ---- cache -------------------------------------------------------------------

CacheLayout::CacheLayout(fs::path cache_root, hub::Repo repo, std::string commit)
    : Layout(cache_root), cache_root_(std::move(cache_root)), repo_(std::move(repo)), commit_(std::move(commit)) {}

StoredPaths CacheLayout::stored_paths(const std::string&, const std::string& etag) const {
  fs::path blob = blob_path(etag);
  // The partial is not huggingface_hub's own "<etag>.incomplete" (its older versions append to
  // that name without verifying), but ends ".incomplete" as its unique temporaries do, so
  // scan_cache_dir lists an interrupted fetch as incomplete.
  return {blob, util::path_with_suffix(blob, ".provkit-partial.incomplete"), blob,
          util::path_with_suffix(cache_root_ / ".locks" / repo_folder_name(repo_) / etag, ".lock")};
}

void CacheLayout::publish(const std::string& path, const std::string& etag) {
  fs::path link = file_path(path);
  // The snapshot's directories are made below the cache without following a
  // link: a planted snapshots/<commit>/sub link cannot take the new link elsewhere.
  util::Fd dir = guard_.parent(link, true);
  std::string name = link.filename().string();
  std::string target = relative_blob_target(path, etag);
  char have[4096];
  ssize_t n = ::readlinkat(dir.get(), name.c_str(), have, sizeof have);
  if (n >= 0 && std::string_view(have, static_cast<std::size_t>(n)) == target) return;
  // A new link is made under the blob's lock, the one a run dropping parts takes before it looks for
  // links: either that run sees this link and keeps the blob, or it removed the blob first and this run
  // refuses instead of linking a name to nothing.
  download::BlobLock lock;
  lock.acquire(guard_, stored_paths(path, etag).lock, true);
  struct stat st;
  if (!guard_.stat(blob_path(etag), st) || !S_ISREG(st.st_mode))
    throw Error(
        ExitCode::check_failed,
        path + ": its blob " + blob_path(etag).string() +
            " was removed after it was verified (another run on this cache dropped the parts it had assembled); "
            "a new run fetches it again");
  // Replace atomically: a new link beside it, renamed over the old one.
  std::string tmp = util::temp_path_beside(name, "link").string();
  if (::symlinkat(target.c_str(), dir.get(), tmp.c_str()) != 0)
    throw Error(ExitCode::check_failed,
                (link.parent_path() / tmp).string() + ": cannot create symlink: " + std::strerror(errno));
  if (::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    int e = errno;
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    throw Error(ExitCode::check_failed, link.string() + ": cannot rename the new link into place: " + std::strerror(e));
  }
  ::fsync(dir.get());
}

namespace {
// The disk a file holds, lstat'ed below the root; 0 when it is not a regular file there.
std::uint64_t held_bytes(const util::Root& guard, const fs::path& p) {
  struct stat st;
  try {
    if (guard.stat(p, st) && S_ISREG(st.st_mode)) return static_cast<std::uint64_t>(st.st_blocks) * 512;
  } catch (const Error&) {}
  return 0;
}
}  // namespace

std::uint64_t CacheLayout::remove_file(const std::string& path, const std::string& etag) {
  guard_.remove(file_path(path));
  if (etag.empty()) return 0;
  // Another snapshot (another commit, or another path of this one with the same content) may still
  // name the blob: then it stays. The links are looked for under the blob's lock, which a run linking
  // the blob holds too (publish), so none appears between the look and the removal. A lock held
  // elsewhere is a run fetching, checking or linking the blob now: it stays for that run.
  download::BlobLock lock;
  if (!lock.acquire(guard_, stored_paths(path, etag).lock, false)) return 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(repo_dir() / "snapshots", fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_symlink(ec)) continue;
    fs::path target = fs::read_symlink(it->path(), ec);
    if (!ec && target.filename() == etag && target.parent_path().filename() == "blobs") return 0;
    ec.clear();
  }
  std::uint64_t held = held_bytes(guard_, blob_path(etag));
  guard_.remove(blob_path(etag));
  return held;
}

void CacheLayout::begin() {
  guard_.make_dirs(snapshot_dir());
  write_cachedir_tag(guard_, cache_root_);
}

void CacheLayout::finish(const std::vector<std::pair<std::string, std::string>>&, const RefPlan& refs) {
  auto write = [&](const std::string& name) {
    fs::path ref = ref_path(name);
    try {
      if (guard_.read_if_present(ref, kRefMax) == commit_) return;  // as huggingface_hub: no write when it holds it
    } catch (const Error&) {  // a link, FIFO or huge file as the ref: replaced below
    }
    guard_.write_atomic(ref, commit_);
  };
  for (const auto& name : refs.names) write(name);
  bool main_named = std::find(refs.names.begin(), refs.names.end(), "main") != refs.names.end();
  struct stat st;
  if (refs.main_if_absent && !main_named && !guard_.stat(ref_path("main"), st)) write("main");
}

std::string CacheLayout::describe() const { return snapshot_dir().string(); }

// ---- local dir -----------------------------------------------------------------

LocalDirLayout::LocalDirLayout(fs::path dir, std::string commit)
    : Layout(dir), dir_(std::move(dir)), commit_(std::move(commit)) {}

fs::path LocalDirLayout::metadata_path(const std::string& path) const {
  return util::path_with_suffix(download_dir() / path, ".metadata");
}

StoredPaths LocalDirLayout::stored_paths(const std::string& path, const std::string& etag) const {
  fs::path state = download_dir() / path;
  return {file_path(path), util::path_with_suffix(state, "." + etag + ".provkit-partial"), state,
          util::path_with_suffix(state, ".lock")};
}

void LocalDirLayout::begin() {
  fs::path state = dir_ / ".cache" / "huggingface";
  struct stat st;
  if (!guard_.stat(state / ".gitignore", st)) guard_.write_atomic(state / ".gitignore", "*");
  write_cachedir_tag(guard_, state);
}

void LocalDirLayout::publish(const std::string& path, const std::string& etag) {
  fs::path gitignore = dir_ / ".cache" / "huggingface" / ".gitignore";
  struct stat st;
  if (!guard_.stat(gitignore, st)) guard_.write_atomic(gitignore, "*");
  // huggingface_hub trusts the metadata while the file's mtime is not newer
  // than the timestamp (plus a second); write it after the file is in place.
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  char ts[64];
  std::snprintf(ts, sizeof ts, "%.6f", now);
  guard_.write_atomic(metadata_path(path), commit_ + "\n" + etag + "\n" + ts + "\n");
}

std::uint64_t LocalDirLayout::remove_file(const std::string& path, const std::string&) {
  std::uint64_t held = held_bytes(guard_, file_path(path));
  guard_.remove(file_path(path));
  guard_.remove(metadata_path(path));
  return held;
}

void LocalDirLayout::finish(const std::vector<std::pair<std::string, std::string>>& sums, const RefPlan&) {
  auto sorted = sums;
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  for (const auto& [path, sha] : sorted) text.append(sha).append("  ").append(path).append("\n");
  guard_.write_atomic(sums_path(), text);
}

std::string LocalDirLayout::describe() const { return dir_.string(); }

std::string LocalDirLayout::reserved_reason(const std::string& path) const {
  if (path == ".cache" || path == ".cache/huggingface" || path.starts_with(".cache/huggingface/"))
    return "the download state of hf-fetch and huggingface_hub is kept under .cache/huggingface";
  return {};
}

}  // namespace provkit::hub::hfcache
