#pragma once
// Flushes a file being written from a worker thread, every kEvery bytes
// written: the disk writes while the network delivers, and the fsync before
// the rename has only the tail left. sync_file_range(2) starts write-back
// without waiting and is enough on Linux, but some kernels take it as a
// no-op (gVisor, which KINDS.md lists for the GPU host, ignores it without
// SYNC_FILE_RANGE_WAIT_AFTER); fdatasync on a thread of its own works
// everywhere and never holds up the transfers. An error it sees is kept and
// reported by finish(): a flush that failed must fail the file, not be
// swallowed by the next fsync.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace provkit::download {

class WriteBehind {
 public:
  static constexpr std::uint64_t kEvery = 128ull << 20;

  WriteBehind() = default;
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;
  ~WriteBehind() { finish(); }

  // Starts flushing `fd` (not owned; it must stay open until finish()).
  void start(int fd);
  // `n` more bytes were written to the file.
  void wrote(std::uint64_t n);
  // Bytes covered by the flushes so far (failed ones too).
  std::uint64_t flushed() {
    std::lock_guard lock(mu_);
    return flushed_;
  }
  // Waits for a flush in progress and stops; 0, or the errno of a failed flush.
  int finish();

 private:
  void loop();

  int fd_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t written_ = 0, flushed_ = 0;
  bool stop_ = false;
  int error_ = 0;
  std::thread worker_;
};

}  // namespace provkit::download
