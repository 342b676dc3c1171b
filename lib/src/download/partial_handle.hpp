#pragma once
// A job's blob lock and its partial file's descriptor, both opened below the
// job's root with no link followed: a partial file planted as a link to a
// file elsewhere is refused, never truncated and written through. Closing
// it lets another process take the file.
#include <cstdint>
#include <filesystem>

#include "io.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::download {

class PartialHandle {
 public:
  // `lock_path` empty: no lock (lock() is then always true).
  PartialHandle(const util::Root& root, std::filesystem::path path, std::filesystem::path lock_path)
      : root_(root), path_(std::move(path)), lock_path_(std::move(lock_path)) {}
  PartialHandle(const PartialHandle&) = delete;
  PartialHandle& operator=(const PartialHandle&) = delete;

  // Takes the blob lock; false when another process holds it and `wait` is false.
  bool lock(bool wait) { return lock_.acquire(root_, lock_path_, wait); }
  // Opens (or creates) the partial file, its parent directories made below
  // the root; returns its length. provkit::Error (check_failed) when it
  // cannot be opened (a link, not a regular file, ...).
  std::uint64_t open();
  int fd() const { return fd_.get(); }
  const std::filesystem::path& path() const { return path_; }
  void truncate(std::uint64_t length);
  // Closes the descriptor and releases the lock.
  void close();

 private:
  const util::Root& root_;
  std::filesystem::path path_;
  std::filesystem::path lock_path_;
  BlobLock lock_;
  util::Fd fd_;
};

}  // namespace provkit::download
