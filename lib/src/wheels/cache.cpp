#include "provkit/wheels/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/json.hpp"
#include "provkit/util/parallel.hpp"

namespace provkit::wheels {

namespace {
std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

nlohmann::json to_json(const CacheEntry& e) {
  const UnpackedWheel& w = e.info;
  nlohmann::json files = nlohmann::json::array();
  for (std::size_t i = 0; i < w.files.size(); ++i) {
    auto& f = w.files[i];
    files.push_back({f.path, f.hash, f.size, f.executable, i < e.mtimes.size() ? e.mtimes[i] : 0});
  }
  return {{"dist_info", w.dist_info}, {"files", files}, {"record_problems", w.record_problems}};
}

CacheEntry from_json(const nlohmann::json& j, fs::path tree) {
  CacheEntry e;
  e.tree = std::move(tree);
  UnpackedWheel& w = e.info;
  w.dist_info = j.at("dist_info").get<std::string>();
  bool all_mtimes = true;
  for (auto& f : j.at("files")) {
    w.files.push_back(
        {f.at(0).get<std::string>(), f.at(1).get<std::string>(), f.at(2).get<std::uint64_t>(), f.at(3).get<bool>()});
    all_mtimes = all_mtimes && f.size() > 4;
    e.mtimes.push_back(f.size() > 4 ? f.at(4).get<std::int64_t>() : 0);
  }
  if (!all_mtimes) e.mtimes.clear();
  w.record_problems = j.at("record_problems").get<std::vector<std::string>>();
  return e;
}

// files.json of one entry: its file list, at most this long.
constexpr std::size_t kMaxFilesJson = 64u << 20;

// Everything below the cache directory is opened through this root: a link planted in unpacked/, tmp/ or
// an entry (a shared cache) never moves a read, a rename or a removal outside it.
util::Root below(const fs::path& root) { return util::Root(root); }

bool is_regular(const util::Root& cache, const fs::path& p) {
  struct stat st {};
  return cache.stat(p, st) && S_ISREG(st.st_mode);
}

// Removes a tree of the cache; what cannot go (a link on the way) stays for the next run to meet.
void remove_quietly(const util::Root& cache, const fs::path& p) {
  try {
    cache.remove_all(p);
  } catch (const Error&) {}
}
}  // namespace

WheelCache::WheelCache(fs::path root) : root_(std::move(root)) {
  std::error_code ec;
  for (auto sub : {"unpacked", "wheels", "local", "tmp"}) fs::create_directories(root_ / sub, ec);
  if (ec) throw Error(ExitCode::usage, root_.string() + ": cannot create the cache directory: " + ec.message());
}

const std::string& WheelCache::key(const std::string& sha256) {
  if (!util::is_hex(sha256, 64))
    throw Error(ExitCode::check_failed,
                "'" + sha256.substr(0, 80) + "' is not a sha256 (64 hex digits); no cache name is made from it");
  return sha256;
}

fs::path WheelCache::temp_path(const std::string& tag) const {
  static std::atomic<unsigned> counter{0};
  return root_ / "tmp" / (tag + "." + std::to_string(::getpid()) + "." + std::to_string(counter++));
}

bool WheelCache::has_unpacked(const std::string& sha256) const {
  return is_regular(below(root_), root_ / "unpacked" / key(sha256) / "files.json");
}

void WheelCache::evict(const std::string& sha256) {
  util::Root cache = below(root_);
  fs::path dir = root_ / "unpacked" / key(sha256);
  struct stat st {};
  if (!cache.stat(dir, st)) return;
  auto old = temp_path(sha256 + ".evicted");
  try {
    cache.rename(dir, old, false);
  } catch (const Error&) {
    return;  // left where it is: the publish that follows meets it and says why
  }
  remove_quietly(cache, old);
}

std::optional<CacheEntry> WheelCache::find(const std::string& sha256) const {
  fs::path dir = root_ / "unpacked" / key(sha256);
  try {
    std::string text = below(root_).read_if_present(dir / "files.json", kMaxFilesJson);
    if (text.empty()) return std::nullopt;
    return from_json(util::parse_untrusted(text, (dir / "files.json").string()), dir / "tree");
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable (or a link in the way): unpacked again, and the publish replaces it
  }
}

WheelCache::Staging WheelCache::begin_stage(const std::string& sha256, const fs::path& wheel_file) {
  Staging staging{sha256, temp_path(key(sha256)), nullptr};
  util::Root cache = below(root_);
  cache.make_dirs(staging.dir / "tree");  // tmp/ itself a link: refused here, before a byte is unpacked
  try {
    staging.unpack = std::make_unique<WheelUnpack>(wheel_file, staging.dir / "tree");
  } catch (...) {
    discard(staging);
    throw;
  }
  return staging;
}

WheelCache::Staged WheelCache::finish_stage(Staging& staging) {
  Staged staged{staging.sha256, staging.dir, {}};
  util::Root cache = below(root_);
  try {
    staged.entry.info = staging.unpack->finish();
    // What each file is right after extraction, to know later whether it still is.
    for (auto& f : staged.entry.info.files) {
      struct stat st {};
      if (!cache.stat(staged.dir / "tree" / f.path, st))
        throw Error(ExitCode::check_failed, (staged.dir / "tree" / f.path).string() + ": unpacked file is missing");
      staged.entry.mtimes.push_back(mtime_ns(st));
    }
    cache.write_atomic(staged.dir / "files.json", to_json(staged.entry).dump());
  } catch (...) {
    discard(staging);
    throw;
  }
  return staged;
}

void WheelCache::discard(const Staging& staging) { remove_quietly(below(root_), staging.dir); }

WheelCache::Staged WheelCache::stage(const std::string& sha256, const fs::path& wheel_file) {
  Staging staging = begin_stage(sha256, wheel_file);
  try {
    run_parts({staging.unpack.get()}, util::cpu_jobs());
  } catch (...) {
    discard(staging);
    throw;
  }
  return finish_stage(staging);
}

void WheelCache::sync() const {
  // One syncfs for a whole batch: file contents reach the disk before any
  // entry is published, far cheaper than an fsync per file.
  util::Fd fd = below(root_).open(root_ / "tmp", O_RDONLY | O_DIRECTORY);
  if (fd) ::syncfs(fd.get());
}

CacheEntry WheelCache::publish(Staged& staged) {
  fs::path dir = root_ / "unpacked" / key(staged.sha256);
  util::Root cache = below(root_);
  struct stat st {};
  if (cache.stat(dir, st) && !(S_ISDIR(st.st_mode) && is_regular(cache, dir / "files.json"))) {
    // Half an entry, or something planted in its place (a link is moved aside as a link, never followed).
    auto old = temp_path(staged.sha256 + ".old");
    try {
      cache.rename(dir, old, false);
      remove_quietly(cache, old);
    } catch (const Error&) {}
  }
  try {
    cache.rename(staged.dir, dir, false);
  } catch (const Error&) {
    // Another process published the same wheel first: keep theirs. Anything else (a link where unpacked/
    // should be a directory) is said as it is.
    remove_quietly(cache, staged.dir);
    if (!has_unpacked(staged.sha256)) throw;
  }
  staged.entry.tree = dir / "tree";
  return staged.entry;
}

void WheelCache::publish_all(std::vector<Staged>& staged) {
  if (staged.empty()) return;
  sync();
  for (auto& s : staged) publish(s);
  sync_unpacked();
}

void WheelCache::sync_unpacked() const {
  if (util::Fd dir = below(root_).open(root_ / "unpacked", O_RDONLY | O_DIRECTORY)) ::fsync(dir.get());
}

CacheEntry WheelCache::unpacked(const std::string& sha256, const fs::path& wheel_file) {
  if (auto found = find(sha256)) return *found;
  Staged staged = stage(sha256, wheel_file);
  sync();
  CacheEntry entry = publish(staged);
  sync_unpacked();
  return entry;
}

std::vector<std::string> WheelCache::changed_files(const CacheEntry& entry) const {
  const auto& files = entry.info.files;
  // Ranges of an entry's files on threads of their own (torch's 15,000 are most of a warm create's checks),
  // each with its own walk: a link in any directory on the way (the tree itself included, or the file
  // itself a link) is a change.
  constexpr std::size_t kRange = 2048;
  const std::size_t ranges = (files.size() + kRange - 1) / kRange;
  std::vector<std::vector<std::string>> changed_in(ranges);
  util::parallel_for(ranges, util::cpu_jobs(), [&](std::size_t r) {
    util::DirectoryWalk tree(below(root_).open(entry.tree, O_PATH | O_DIRECTORY));
    for (std::size_t i = r * kRange; i < std::min(files.size(), (r + 1) * kRange); ++i) {
      struct stat st {};
      bool same = tree.stat(files[i].path, st) && S_ISREG(st.st_mode) &&
                  static_cast<std::uint64_t>(st.st_size) == files[i].size &&
                  (entry.mtimes.empty() || mtime_ns(st) == entry.mtimes[i]);
      if (!same) changed_in[r].push_back(files[i].path);
    }
  });
  std::vector<std::string> changed;
  for (auto& part : changed_in) changed.insert(changed.end(), part.begin(), part.end());
  return changed;
}

bool WheelCache::first_fallback_notice(const std::string& warning) {
  fs::path mark = root_ / ("link-fallback-" + util::sha256_hex(warning).substr(0, 16));
  util::Fd fd = below(root_).open(mark, O_WRONLY | O_CREAT | O_EXCL, 0644);
  return fd || errno != EEXIST;  // unwritable cache: say it every time
}

std::string WheelCache::local_wheel_sha256(const fs::path& wheel) {
  // A regular file, judged and hashed through one descriptor: a FIFO or a
  // device named as a wheel (a lock's path, a --find-links entry) never blocks or reads forever.
  util::Fd fd = util::open_regular(wheel);
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0)
    throw Error(ExitCode::usage, wheel.string() + ": cannot read wheel: " + util::describe_open_error(errno));
  std::error_code ec;
  fs::path abs = fs::absolute(wheel, ec);
  std::string stamp = std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
                      std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino);
  fs::path index = root_ / "local" / (util::sha256_hex(abs.string()) + ".json");
  util::Root cache(root_);
  try {
    if (auto text = cache.read_if_present(index, std::size_t{64} * 1024); !text.empty()) {
      auto j = util::parse_untrusted(text, index.string());
      if (j.at("stamp").get<std::string>() == stamp) return j.at("sha256").get<std::string>();
    }
  } catch (const std::exception&) {}
  util::Hasher h(util::DigestKind::sha256);
  std::vector<char> buf(1 << 20);
  util::read_blocks(
      fd.get(), buf, [&](const char* p, std::size_t n) { h.update(p, n); }, wheel.string());
  std::string sha = h.hex_digest();
  try {
    cache.write_atomic(index, nlohmann::json{{"path", abs.string()}, {"stamp", stamp}, {"sha256", sha}}.dump());
  } catch (const Error&) {}
  return sha;
}

}  // namespace provkit::wheels
