#pragma once
// Puts cache files into environments: reflink (FICLONE), else hardlink, else
// copy. The mode is settled on the first file; a fallback is noted once.
#include <filesystem>
#include <mutex>
#include <string>

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
const char* link_mode_name(LinkMode m);
LinkMode parse_link_mode(const std::string& s);  // throws Error(usage)

class Linker {
 public:
  explicit Linker(LinkMode preferred) : preferred_(preferred), mode_(preferred) {}
  // `to` must not exist (an existing one is replaced); `from` must be a regular file. Thread-safe.
  void link(const FileAt& from, const FileAt& to);
  // The same at paths the caller gave (their directories followed as they are).
  void link(const fs::path& from, const fs::path& to);
  LinkMode mode() const { return mode_; }
  // "reflink not supported (...); hardlinking instead", or empty.
  std::string warning() const;

 private:
  bool try_mode(LinkMode m, const FileAt& from, const FileAt& to, int& err);
  LinkMode preferred_;
  LinkMode mode_;
  bool settled_ = false;
  std::string warning_;
  mutable std::mutex mutex_;
};

// Copies a regular file with its permission bits (copy_file_range, then read/write).
void copy_file_contents(const FileAt& from, const FileAt& to);

}  // namespace provkit::wheels
