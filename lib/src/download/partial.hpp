#pragma once
// A file being fetched: its partial file (kept across runs), the byte ranges
// it is fetched in with their sidecar, its blob lock and the hash that
// follows the contiguous prefix. What the bytes mean and where they come
// from is the engine's (download_engine.cpp); this is the bookkeeping.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "io.hpp"
#include "prefix_hasher.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/download/ranges.hpp"
#include "provkit/download/write_behind.hpp"

namespace provkit::download {

class PartialFile {
 public:
  explicit PartialFile(const download::Job& job) : job_(job), root_(job_root(job)) {}
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile() { close(); }

  // Takes the job's blob lock (see download::Job::lock_path); false when another
  // process holds it and `wait` is false.
  bool lock(bool wait) { return lock_.acquire(root_, job_.lock_path, wait); }
  // The directory the job's files lie below, opened without following links.
  const util::Root& root() const { return root_; }
  // Opens (or creates) the partial file and works out which bytes it already
  // holds: from its sidecar when it has one, else its length (a single
  // stream's partial file is its prefix). Unusable leftovers are dropped,
  // with a note to `observer`.
  void open(int connections, std::uint64_t min_split, download::Observer& observer);
  // The file is finished with (renamed, kept aside or failed): another process may take it.
  void close();

  bool split() const { return ranges_.size() > 1; }
  bool all_complete() const;
  std::vector<ranges::Range>& ranges() { return ranges_; }
  std::uint64_t have() const { return have_; }
  // The first incomplete range: the hash has every byte before it.
  std::size_t frontier() const { return frontier_; }
  int fd() const { return fd_.get(); }

  // Takes bytes of ranges[i] that follow its first missing byte. They are
  // gathered and written in chunks of kWriteChunk (curl hands over 16 KiB at
  // a time), and counted in ranges[i].done once written.
  void write(std::size_t i, const char* data, std::size_t n);
  // Writes what ranges[i] has gathered (before a new request for the range,
  // and when its transfer ends).
  void flush(std::size_t i);
  // Writes what every range has gathered; then the sidecar when it is due.
  void flush_all();
  bool gathering(std::size_t i) const { return !pending_[i].empty(); }
  // What ranges[i] still lacks, gathered bytes counted.
  std::uint64_t missing(std::size_t i) const { return ranges_[i].missing() - pending_[i].size(); }
  void save_sidecar();
  // Rewrites the sidecar when ranges[i] is full or the last write is old:
  // what a kill can cost is that much transfer time.
  void save_sidecar_now_and_then(std::size_t i);
  void remove_sidecar();
  // Discards what is in the partial file and starts at byte 0.
  void start_over();
  // The server does not honour ranges: keep the contiguous prefix (the hash
  // has read no further) and fetch the rest again as one stream.
  void go_sequential() { continue_as_one_stream(ranges::contiguous(ranges_)); }
  // Waits for the background flush; 0, or the errno of one that failed (then the file must fail).
  int finish_flushing() { return write_behind_.finish(); }
  // Every byte hashed; the hashes are the caller's to finalise.
  Hashes& finish_hash() { return hasher_.finish(job_.spec.size); }

 private:
  void advance_hash();
  // Starts the write-back of what ranges[i] wrote since the last call, once
  // that is kWriteBehind or the range is complete: the disk writes while
  // the network delivers, and the final fsync waits only for the tail.
  // Writes range i's next `n` bytes at its position and moves its progress, write-back and hash on.
  void commit(std::size_t i, const char* data, std::size_t n);
  void start_write_back(std::size_t i);
  // Goes on as one stream from byte `keep`: the bytes before it stay, the
  // rest of the partial file (and its sidecar) is dropped.
  void continue_as_one_stream(std::uint64_t keep);

  const download::Job& job_;
  util::Root root_;
  BlobLock lock_;
  util::Fd fd_;
  std::vector<ranges::Range> ranges_;  // one range: a single stream, no sidecar
  std::filesystem::path sidecar_;      // "<partial>.ranges"
  std::chrono::steady_clock::time_point sidecar_written_{};
  std::size_t frontier_ = 0;
  std::uint64_t have_ = 0;                   // bytes written, all ranges
  std::vector<std::string> pending_;         // per range: received, not yet written
  std::vector<std::uint64_t> written_back_;  // per range: write-back started up to this offset
  PrefixHasher hasher_;
  WriteBehind write_behind_;
};

}  // namespace provkit::download
