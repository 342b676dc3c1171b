#pragma once
// A partial file's ranges and their sidecar ("<partial>.ranges"): which bytes
// it holds, worked out once when it is opened (plan_resume, resume.hpp: the
// one resume rule, traced), and kept on disk while bytes arrive so that a killed run's
// successor fetches only what is missing.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "provkit/download/ranges.hpp"
#include "provkit/download/resume.hpp"
#include "provkit/util/beneath.hpp"

namespace provkit::download {

// Writes a sidecar from a thread of its own. The rename over the old sidecar waits for the file system's
// journal (ext4: 0.03-0.16 s while another thread's fdatasync commits, measured on the dev box), and the
// thread that saves is the one that receives for every file: a save on it stalled every transfer. Only the
// newest content posted is written (each says all there is); drain() waits until none is pending. A failed
// write is thrown on the caller's thread, at the next post() or drain().
class SidecarWriter {
 public:
  SidecarWriter(const util::Root& root, std::filesystem::path path) : root_(root), path_(std::move(path)) {}
  SidecarWriter(const SidecarWriter&) = delete;
  SidecarWriter& operator=(const SidecarWriter&) = delete;
  ~SidecarWriter();

  void post(std::string content);
  void drain();

 private:
  void loop();
  void rethrow();

  const util::Root& root_;
  std::filesystem::path path_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::string> pending_;
  bool writing_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;  // started by the first post
};

class RangeRecord {
 public:
  RangeRecord(const util::Root& root, std::filesystem::path sidecar, std::uint64_t size)
      : root_(root), sidecar_(sidecar), size_(size), writer_(root, std::move(sidecar)) {}

  // Reads the sidecar (bounded, below the root, no link followed) and decides
  // with plan_resume what a partial file of `length` bytes holds; the ranges
  // are then the plan's (the caller truncates the file where it says).
  ResumePlan load(std::uint64_t length, int connections, std::uint64_t min_split);

  bool split() const { return ranges_.size() > 1; }
  bool all_complete() const;
  std::vector<ranges::Range>& ranges() { return ranges_; }
  const std::vector<ranges::Range>& ranges() const { return ranges_; }
  // Bytes written, all ranges.
  std::uint64_t have() const { return have_; }
  // The first incomplete range: every byte before it is written.
  std::size_t frontier() const { return frontier_; }
  // Range i's next `n` bytes are written; true when the frontier moved.
  bool advance(std::size_t i, std::uint64_t n);

  // Writes the sidecar now, on this thread (after any background write).
  void save();
  // Rewrites the sidecar when ranges[i] is full or the last write is old:
  // what a kill can cost is that much transfer time. In the background.
  void save_now_and_then(std::size_t i);
  // Rewrites it when one is due by time only (after a round of writes). In the background.
  void save_if_due();
  // Waits for a background write (before the blob's lock is let go).
  void drain() { writer_.drain(); }
  void remove();
  // One range from byte `keep` on (bytes before it kept); the sidecar goes.
  void as_one_stream(std::uint64_t keep);

 private:
  void move_frontier();
  // The sidecar as the ranges stand now, handed to the writer's thread.
  void save_in_background();

  const util::Root& root_;
  std::filesystem::path sidecar_;
  std::uint64_t size_;
  std::vector<ranges::Range> ranges_;  // one range: a single stream, no sidecar
  std::chrono::steady_clock::time_point written_{};
  std::size_t frontier_ = 0;
  std::uint64_t have_ = 0;
  SidecarWriter writer_;
};

}  // namespace provkit::download
