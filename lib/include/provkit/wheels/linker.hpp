#pragma once
// Puts cache files into environments: reflink (FICLONE), else hardlink, else
// copy. The mode is settled on the first file; a fallback is noted once.
//
// File modes: an installed file gets the mode pip gives it under the installing run's umask
// (installed_file_mode), whatever the cache's file has. A hardlink shares the cache file's inode, so it is
// made only where the cache file has exactly that mode (the cache stores 0644 and 0755, what umask 022
// gives); under another umask the file is copied (or reflinked) with its own mode instead.
#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace provkit::wheels {

namespace fs = std::filesystem;

enum class LinkMode { clone, hardlink, copy };

// A file named `name` in the open directory `dir`: where a file is taken from (a cache entry's tree) or
// placed (an environment). The caller opens `dir` below its root, so no link on the way is followed; the
// name itself is never followed either (a source is opened O_NOFOLLOW, a target created O_EXCL |
// O_NOFOLLOW). `shown` is the path that messages name.
struct FileAt {
  int dir = -1;
  std::string name;
  fs::path shown;
};
// What a cache file was when it was unpacked (size, and mtime in ns where the entry recorded it, else 0).
// A file placed from a source no longer so (an edit through a hardlink from an environment changed the
// shared inode) is taken back out and SourceChanged thrown: the check that keeps the cache unpoisonable,
// made on the stat a hardlink needs anyway, so a warm create looks at each file once.
struct SourceState {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};
class SourceChanged : public std::runtime_error {
 public:
  explicit SourceChanged(const fs::path& source)
      : std::runtime_error(source.string() + " changed since it was unpacked"), path(source) {}
  fs::path path;
};
// Whether `st` (the source's, or the inode a hardlink shares with it) is what `expected` recorded.
bool same_source(const struct stat& st, const SourceState& expected);

const char* link_mode_name(LinkMode m);
// "clone" (or "reflink"), "hardlink", "copy"; nothing for any other word (the tool says its flag).
std::optional<LinkMode> parse_link_mode(std::string_view s);

// pip's mode for an installed file under `umask`: 0666 less the umask; an executable 0777 less the umask
// plus every execute bit (pip's set_extracted_file_to_default_mode_plus_executable).
mode_t installed_file_mode(bool executable, unsigned umask);

class Linker {
 public:
  // `umask`: the installing run's (util::process_umask()).
  Linker(LinkMode preferred, unsigned umask);
  explicit Linker(LinkMode preferred);
  // `to` must not exist (an existing one is replaced); `from` must be a regular file. `to` gets
  // installed_file_mode(executable) (see above). `expected`: what `from` must still be (SourceChanged
  // otherwise); null: not checked. Thread-safe.
  void link(const FileAt& from, const FileAt& to, bool executable, const SourceState* expected = nullptr);
  // The same at paths the caller gave (their directories followed as they are).
  void link(const fs::path& from, const fs::path& to, bool executable);
  LinkMode mode() const { return mode_; }
  mode_t file_mode(bool executable) const { return installed_file_mode(executable, umask_); }
  // "reflink not supported (...); hardlinking instead", or empty.
  std::string warning() const;

 private:
  bool try_mode(LinkMode m, const FileAt& from, const FileAt& to, mode_t file_mode, const SourceState* expected,
                int& err);
  LinkMode preferred_;
  unsigned umask_;
  LinkMode mode_;
  std::atomic<bool> settled_{false};  // once true, mode_ no longer changes: read without the lock
  std::string warning_;
  mutable std::mutex mutex_;
};

// Copies a regular file (copy_file_range, then read/write) to a new file of exactly `mode`; `expected` as
// for Linker::link.
void copy_file_contents(const FileAt& from, const FileAt& to, mode_t mode, const SourceState* expected = nullptr);

}  // namespace provkit::wheels
