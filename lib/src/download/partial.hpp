#pragma once
// A file being fetched, put together from one part per job: its blob lock
// and descriptor (PartialHandle), its ranges and their sidecar
// (RangeRecord), the writer of received bytes with their write-back
// (RangeWriter), and the hash that follows the contiguous prefix
// (PrefixHasher). What the bytes mean and where they come from is the
// engine's (engine.cpp); this is the bookkeeping.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "io.hpp"
#include "partial_handle.hpp"
#include "prefix_hasher.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/download/ranges.hpp"
#include "range_record.hpp"
#include "range_writer.hpp"

namespace provkit::download {

class PartialFile {
 public:
  explicit PartialFile(const download::Job& job);
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile() { close(); }

  // Takes the job's blob lock (see download::Job::lock_path); false when another
  // process holds it and `wait` is false.
  bool lock(bool wait) { return handle_.lock(wait); }
  // The directory the job's files lie below, opened without following links.
  const util::Root& root() const { return root_; }
  // Opens (or creates) the partial file and works out which bytes it already
  // holds: from its sidecar when it has one, else its length (a single
  // stream's partial file is its prefix). Unusable leftovers are dropped,
  // with a note to `observer`.
  void open(int connections, std::uint64_t min_split, download::Observer& observer);
  // The file is finished with (renamed, kept aside or failed): another process may take it.
  void close();

  bool split() const { return record_.split(); }
  bool all_complete() const { return record_.all_complete(); }
  std::vector<ranges::Range>& ranges() { return record_.ranges(); }
  std::uint64_t have() const { return record_.have(); }
  // The first incomplete range: the hash has every byte before it.
  std::size_t frontier() const { return record_.frontier(); }
  int fd() const { return handle_.fd(); }

  void write(std::size_t i, const char* data, std::size_t n) { writer_.write(i, data, n); }
  void flush(std::size_t i) { writer_.flush(i); }
  // Writes what every range has gathered; then the sidecar when it is due.
  void flush_all() {
    if (writer_.flush_all()) record_.save_if_due();
  }
  bool gathering(std::size_t i) const { return writer_.gathering(i); }
  // What ranges[i] still lacks, gathered bytes counted.
  std::uint64_t missing(std::size_t i) const { return record_.ranges()[i].missing() - writer_.pending(i); }
  void save_sidecar() { record_.save(); }
  void save_sidecar_now_and_then(std::size_t i) { record_.save_now_and_then(i); }
  void remove_sidecar() { record_.remove(); }
  // Discards what is in the partial file and starts at byte 0.
  void start_over();
  // The server does not honour ranges: keep the contiguous prefix (the hash
  // has read no further) and fetch the rest again as one stream.
  void go_sequential() { continue_as_one_stream(ranges::contiguous(record_.ranges())); }
  // Waits for the background flush; 0, or the errno of one that failed (then the file must fail).
  int finish_flushing() { return writer_.finish(); }
  // Every byte hashed; the hashes are the caller's to finalise.
  Hashes& finish_hash() { return hasher_.finish(job_.spec.size); }

 private:
  // Goes on as one stream from byte `keep`: the bytes before it stay, the
  // rest of the partial file (and its sidecar) is dropped.
  void continue_as_one_stream(std::uint64_t keep);

  const download::Job& job_;
  util::Root root_;
  PartialHandle handle_;
  RangeRecord record_;
  RangeWriter writer_;
  PrefixHasher hasher_;
};

}  // namespace provkit::download
