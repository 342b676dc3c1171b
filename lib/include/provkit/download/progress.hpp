#pragma once
// The numbers of a live progress display, kept from a run's observer events: files done, bytes done
// (finished files plus what the transfers in flight hold), the rate since the start, the time left.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace provkit::download {

class ProgressTally {
 public:
  using Clock = std::chrono::steady_clock;
  void begin(std::uint64_t total_bytes, std::size_t files, Clock::time_point now);
  void start(const std::string& path, std::uint64_t size, std::uint64_t from);
  void progress(const std::string& path, std::uint64_t have);  // bytes of it on disk
  void restart(const std::string& path);                       // from byte 0 again
  void finish(const std::string& path, std::uint64_t size);

  struct View {
    std::size_t file_number = 0, files = 0;  // the first in flight is file_number of files
    std::size_t files_done = 0;
    std::string path;  // that one, with its bytes so far and size
    std::uint64_t have = 0, size = 0, done = 0, total = 0;
    double rate = 0;                   // bytes per second received (0 in the first 0.2 s)
    std::optional<long> seconds_left;  // while the rate is known and bytes remain
  };
  // Nothing when no transfer is in flight or there is nothing to show (no bytes to fetch).
  std::optional<View> view(Clock::time_point now) const;
  // The run's totals (files done, bytes, rate, time left), also between transfers and before the first:
  // the periodic progress lines and the summary of an interrupted run. No current file.
  View totals(Clock::time_point now) const;
  std::uint64_t transferred() const { return transferred_; }
  bool has_total() const { return total_bytes_ > 0; }

 private:
  std::uint64_t total_bytes_ = 0, done_bytes_ = 0, transferred_ = 0;
  std::size_t files_ = 0, files_done_ = 0;
  std::map<std::string, std::uint64_t> current_;  // path -> bytes so far
  std::map<std::string, std::uint64_t> sizes_;
  Clock::time_point started_ = Clock::now();
};

}  // namespace provkit::download
