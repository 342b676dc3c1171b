#pragma once
// The content-addressed wheel cache:
//   <root>/unpacked/<sha256>/tree/...     a verified, unpacked wheel
//   <root>/unpacked/<sha256>/files.json   its file list (path, hash, size, mode)
//   <root>/wheels/<sha256>.whl            downloaded wheels, checked while streaming
//   <root>/local/<key>.json               sha256 of find-links files by path+size+mtime
//   <root>/tmp/                           work in progress (partial downloads among it); never trusted
//   <root>/locks/                         a lock file per download (index.cpp)
// An entry appears only by rename of a complete temporary directory, so a
// crash leaves nothing half-unpacked under unpacked/.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "provkit/wheels/zip.hpp"

namespace provkit::wheels {

namespace fs = std::filesystem;

struct CacheEntry {
  fs::path tree;       // unpacked wheel contents
  UnpackedWheel info;  // files with their actual hashes; RECORD problems
  // Each file's mtime (ns) as it was right after extraction, parallel to
  // info.files; empty for an entry written before they were recorded.
  std::vector<std::int64_t> mtimes;
};

class WheelCache {
 public:
  explicit WheelCache(fs::path root);
  const fs::path& root() const { return root_; }

  // The unpacked entry for a wheel whose sha256 is `sha256`, unpacking
  // `wheel_file` (already verified to have that hash) when absent.
  CacheEntry unpacked(const std::string& sha256, const fs::path& wheel_file);
  std::optional<CacheEntry> find(const std::string& sha256) const;

  // The same in steps, for batches: stage (unpack into tmp/, in parallel),
  // then publish_all (one syncfs, then a rename per entry).
  struct Staged {
    std::string sha256;
    fs::path dir;
    CacheEntry entry;
  };
  Staged stage(const std::string& sha256, const fs::path& wheel_file);
  // stage() itself in steps, for a batch whose parts all run on one pool of threads, largest first:
  // begin_stage (the wheel's central directory judged, its directories made in tmp/), the unpack's parts,
  // then finish_stage. A staging that fails or is dropped is removed with discard().
  struct Staging {
    std::string sha256;
    fs::path dir;
    std::unique_ptr<WheelUnpack> unpack;
  };
  Staging begin_stage(const std::string& sha256, const fs::path& wheel_file);
  Staged finish_stage(Staging& staging);
  void discard(const Staging& staging);
  void publish_all(std::vector<Staged>& staged);
  bool has_unpacked(const std::string& sha256) const;
  // Drops an unpacked entry (moved aside, then removed), e.g. when its files
  // may have been changed through a hardlink.
  void evict(const std::string& sha256);

  // The entry's files that are no longer as they were extracted: missing, not
  // a regular file, another size or mtime (an edit through a hardlink from an
  // environment changes both). Empty when the entry can be linked as it is.
  std::vector<std::string> changed_files(const CacheEntry& entry) const;

  // Whether the link-mode fallback has been reported for this cache before;
  // marks it reported. The fallback is a property of the cache's file system,
  // so it is said once per cache, not on every run.
  bool first_fallback_notice(const std::string& warning);

  // sha256 of a local wheel, remembered per path, size, mtime and inode.
  std::string local_wheel_sha256(const fs::path& wheel);

  fs::path downloaded_wheel(const std::string& sha256) const { return root_ / "wheels" / (key(sha256) + ".whl"); }
  fs::path temp_path(const std::string& tag) const;

 private:
  void sync() const;
  void sync_unpacked() const;  // fsync of unpacked/, after entries were renamed into it
  CacheEntry publish(Staged& staged);
  // `sha256` as a name below the cache: 64 lower-case hex digits, or Error (a key is a name, never a path;
  // every entry and download is named through this).
  static const std::string& key(const std::string& sha256);
  fs::path root_;
};

}  // namespace provkit::wheels
