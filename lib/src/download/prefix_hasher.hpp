#pragma once
// Hashes a file from byte 0 on a worker thread, reading the bytes back from
// the page cache right behind the writers: receiving and writing never wait
// for sha256 (one stream hashes at about 1.5-2 GB/s, slower than a local
// network), ranges that arrive out of order are hashed once the contiguous
// prefix reaches them, and the kept bytes of a resumed file are hashed the
// same way, without holding up the transfers.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "digest.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::download {

class PrefixHasher {
 public:
  PrefixHasher() = default;
  PrefixHasher(const PrefixHasher&) = delete;
  PrefixHasher& operator=(const PrefixHasher&) = delete;
  ~PrefixHasher() { stop(); }

  // Hashes through a duplicate of `fd` (the partial file's own descriptor:
  // never the path opened again, which may name other bytes by then); `path` names it in errors.
  void start(int fd, const std::filesystem::path& path, const download::FileSpec& spec);
  // Waits for the worker to end; what it hashed is lost.
  void stop();
  // Bytes [0, n) are written and may be hashed. Waits while more than
  // kMaxLag bytes wait for the hash, so that they are still in the page
  // cache when it reads them.
  void advance(std::uint64_t n);
  // Every byte of [0, n) hashed; the hashes are then the caller's to finalise.
  Hashes& finish(std::uint64_t n);

 private:
  static constexpr std::size_t kBlock = std::size_t{256} * 1024;  // stays in the CPU's cache between read and hash
  static constexpr std::uint64_t kMaxLag = 512ull << 20;

  void loop();

  Hashes hashes_;
  std::filesystem::path path_;
  util::Fd fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t target_ = 0, hashed_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace provkit::download
