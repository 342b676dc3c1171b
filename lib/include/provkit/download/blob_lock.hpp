#pragma once
// The per-blob flock (StoredPaths::lock): held by the download engine while a blob's partial file is written
// and renamed, and by the cache while it links a blob into a snapshot or drops one, so that with two runs on
// one cache a blob is never removed between another run's look at it and its link.
#include <filesystem>

#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::download {

// An flock(2) on a lock file. The kernel releases it when the holder dies, so a lock file left by a killed
// process never blocks.
class BlobLock {
 public:
  BlobLock() = default;
  BlobLock(const BlobLock&) = delete;
  BlobLock& operator=(const BlobLock&) = delete;
  ~BlobLock() { release(); }

  // True when held (or when there is no lock path). `wait`: block until
  // free. The lock file is opened below `root`, a regular file, no link followed.
  bool acquire(const util::Root& root, const std::filesystem::path& path, bool wait);
  void release() { fd_.reset(); }  // closing drops the flock

 private:
  util::Fd fd_;
};

}  // namespace provkit::download
