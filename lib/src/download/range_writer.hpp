#pragma once
// The writer of a partial file's ranges: received bytes gathered per range
// and written in chunks of kWriteChunk (curl hands over 16 KiB at a time),
// each range's write-back started as it lands (sync_file_range every
// kWriteBehind, and WriteBehind's fdatasync off the receiving thread), the
// progress moved on in the RangeRecord once bytes are written.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "range_record.hpp"
#include "write_behind.hpp"

namespace provkit::download {

class RangeWriter {
 public:
  static constexpr std::size_t kWriteChunk = 1u << 20;
  static constexpr std::uint64_t kWriteBehind = 8u << 20;

  // `committed(i)` runs after range i's bytes were written and counted, with
  // `frontier_moved` when the contiguous prefix may have grown.
  using Committed = std::function<void(std::size_t i, bool frontier_moved)>;
  RangeWriter(const std::filesystem::path& path, std::uint64_t size) : path_(path), size_(size) {}

  // Writes through `fd` into `record`'s ranges from where they stand.
  void start(int fd, RangeRecord& record, Committed committed);
  // Takes bytes of range i that follow its first missing byte.
  void write(std::size_t i, const char* data, std::size_t n);
  // Writes what range i has gathered (before a new request for it, and when its transfer ends).
  void flush(std::size_t i);
  // Writes what every range has gathered; true when anything was written.
  bool flush_all();
  bool gathering(std::size_t i) const { return !pending_[i].empty(); }
  std::uint64_t pending(std::size_t i) const { return pending_[i].size(); }
  // The record became one stream (RangeRecord::as_one_stream): nothing gathered, write-back from `keep`.
  void as_one_stream(std::uint64_t keep);
  // Waits for the background flush; 0, or the errno of one that failed.
  int finish() { return write_behind_.finish(); }

 private:
  void commit(std::size_t i, const char* data, std::size_t n);
  // Starts the write-back of what range i wrote since the last call, once
  // that is kWriteBehind or the range is complete: the disk writes while
  // the network delivers, and the final fsync waits only for the tail.
  void start_write_back(std::size_t i);

  std::filesystem::path path_;
  std::uint64_t size_;
  int fd_ = -1;
  RangeRecord* record_ = nullptr;
  Committed committed_;
  std::vector<std::string> pending_;         // per range: received, not yet written
  std::vector<std::uint64_t> written_back_;  // per range: write-back started up to this offset
  WriteBehind write_behind_;
};

}  // namespace provkit::download
