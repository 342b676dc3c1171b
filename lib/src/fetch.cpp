#include "provkit/fetch.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "provkit/fsutil.hpp"
#include "provkit/hash.hpp"
#include "provkit/ranges.hpp"

namespace provkit::fetch {

namespace {

constexpr std::size_t kReadBuffer = 4 * 1024 * 1024;

[[noreturn]] void io_error(const fs::path& path, const std::string& what) {
  throw Error(ExitCode::check_failed, path.string() + ": " + what + ": " + std::strerror(errno));
}

// `still_needed`: bytes the file still needs on disk.
[[noreturn]] void no_space(const fs::path& path, std::uint64_t still_needed) {
  throw Error(ExitCode::check_failed, path.string() + ": no space left on the device; " + std::to_string(still_needed) +
                                          " more bytes are needed for this file (what is there is kept, and a "
                                          "rerun resumes once there is room)");
}

void write_all(int fd, const char* data, std::size_t n, const fs::path& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) io_error(path, "write error");
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

void make_parent(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) throw Error(ExitCode::check_failed, p.parent_path().string() + ": cannot create directory: " + ec.message());
}

// An flock(2) on a job's lock file, held while its partial file is written
// and renamed. The kernel releases it when the holder dies, so a lock file
// left by a killed process never blocks.
class BlobLock {
 public:
  BlobLock() = default;
  BlobLock(const BlobLock&) = delete;
  BlobLock& operator=(const BlobLock&) = delete;
  ~BlobLock() { release(); }

  // True when held (or when there is no lock path). `wait`: block until free.
  bool acquire(const fs::path& path, bool wait) {
    if (path.empty()) return true;
    make_parent(path);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) io_error(path, "cannot open lock file");
    int rc;
    while ((rc = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR) {
    }
    if (rc == 0) return true;
    int e = errno;
    release();
    if (e == EWOULDBLOCK) return false;
    errno = e;
    io_error(path, "cannot lock");
  }
  void release() {
    if (fd_ >= 0) ::close(fd_);  // closing drops the flock
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// The digests a file is checked with, fed as bytes stream in.
struct Hashes {
  Hasher sha256{DigestKind::sha256};
  std::unique_ptr<Hasher> git;  // only when a git blob id is expected

  void reset(const FileSpec& spec) {
    sha256 = Hasher(DigestKind::sha256);
    git.reset();
    if (spec.git_oid) {
      git = std::make_unique<Hasher>(DigestKind::sha1);
      std::string header = "blob " + std::to_string(spec.size);
      git->update(header.data(), header.size() + 1);  // with the terminating NUL
    }
  }
  void update(const char* d, std::size_t n) {
    sha256.update(d, n);
    if (git) git->update(d, n);
  }
};

// Feeds the first `limit` bytes of a file into `h`; returns how many were read.
template <typename Sink>
std::uint64_t hash_file_prefix(const fs::path& path, std::uint64_t limit, Sink& h) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error(path, "cannot open");
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<char[]> buf(new char[kReadBuffer]);
  std::uint64_t done = 0;
  while (done < limit) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kReadBuffer, limit - done));
    ssize_t n = ::read(fd, buf.get(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      errno = e;
      io_error(path, "read error");
    }
    if (n == 0) break;
    h.update(buf.get(), static_cast<std::size_t>(n));
    done += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return done;
}

struct Check {
  std::string sha256, git_oid;
  bool ok = true;
  std::string message;
};

// Finalises the hashes and compares them with the spec.
Check check_hashes(Hashes& h, const FileSpec& spec) {
  Check c;
  c.sha256 = h.sha256.hex_digest();
  if (h.git) c.git_oid = h.git->hex_digest();
  if (spec.sha256 && *spec.sha256 != c.sha256) {
    c.ok = false;
    c.message = "sha256 mismatch: expected " + *spec.sha256 + ", got " + c.sha256;
  } else if (spec.git_oid && *spec.git_oid != c.git_oid) {
    c.ok = false;
    c.message = "git blob id mismatch: expected " + *spec.git_oid + ", got " + c.git_oid + " (sha256 " + c.sha256 + ")";
  }
  return c;
}

// Hashes a file from byte 0 on a worker thread, reading the bytes back from
// the page cache right behind the writers: receiving and writing never wait
// for sha256 (one stream hashes at about 1.5-2 GB/s, slower than a local
// network), ranges that arrive out of order are hashed once the contiguous
// prefix reaches them, and the kept bytes of a resumed file are hashed the
// same way, without holding up the transfers.
class PrefixHasher {
 public:
  PrefixHasher() = default;
  PrefixHasher(const PrefixHasher&) = delete;
  PrefixHasher& operator=(const PrefixHasher&) = delete;
  ~PrefixHasher() { stop(); }

  void start(const fs::path& path, const FileSpec& spec) {
    stop();
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) io_error(path, "cannot open");
    path_ = path;
    hashes_.reset(spec);
    target_ = hashed_ = 0;
    stop_ = false;
    error_ = nullptr;
    worker_ = std::thread([this] { loop(); });
  }
  // Waits for the worker to end; what it hashed is lost.
  void stop() {
    if (worker_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
      }
      cv_.notify_all();
      worker_.join();
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Bytes [0, n) are written and may be hashed. Waits while more than
  // kMaxLag bytes wait for the hash, so that they are still in the page
  // cache when it reads them.
  void advance(std::uint64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    if (n <= target_) return;
    target_ = n;
    cv_.notify_all();
    cv_.wait(lock, [&] { return error_ || target_ - hashed_ <= kMaxLag; });
    if (error_) std::rethrow_exception(error_);
  }
  // Every byte of [0, n) hashed; the hashes are then the caller's to finalise.
  Hashes& finish(std::uint64_t n) {
    advance(n);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return error_ || hashed_ >= n; });
    if (error_) std::rethrow_exception(error_);
    return hashes_;
  }

 private:
  static constexpr std::size_t kBlock = 256 * 1024;  // stays in the CPU's cache between read and hash
  static constexpr std::uint64_t kMaxLag = 512ull << 20;

  void loop() {
    std::unique_ptr<char[]> buf(new char[kBlock]);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || target_ > hashed_; });
      if (stop_) return;
      std::uint64_t from = hashed_, to = std::min(target_, hashed_ + (8u << 20));
      lock.unlock();
      try {
        while (from < to) {
          std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, to - from));
          ssize_t n = ::pread(fd_, buf.get(), want, static_cast<off_t>(from));
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) io_error(path_, "read error");
          if (n == 0) throw Error(ExitCode::check_failed, path_.string() + ": shorter than the bytes written to it");
          hashes_.update(buf.get(), static_cast<std::size_t>(n));
          from += static_cast<std::uint64_t>(n);
        }
      } catch (...) {
        lock.lock();
        error_ = std::current_exception();
        cv_.notify_all();
        return;
      }
      lock.lock();
      hashed_ = to;
      cv_.notify_all();
    }
  }

  Hashes hashes_;
  fs::path path_;
  int fd_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t target_ = 0, hashed_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace

std::string state_name(FileState s) {
  switch (s) {
    case FileState::ok: return "OK";
    case FileState::missing: return "MISSING";
    case FileState::size_mismatch: return "SIZE MISMATCH";
    case FileState::sha256_mismatch: return "SHA256 MISMATCH";
    case FileState::git_oid_mismatch: return "GIT OID MISMATCH";
  }
  return "?";
}

Verification verify_file(const fs::path& path, const FileSpec& spec) {
  Verification v;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    v.state = FileState::missing;
    return v;
  }
  v.size = static_cast<std::uint64_t>(st.st_size);
  if (v.size != spec.size) {
    v.state = FileState::size_mismatch;
    return v;
  }
  Hashes h;
  h.reset(spec);
  hash_file_prefix(path, v.size, h);
  Check c = check_hashes(h, spec);
  v.sha256 = c.sha256;
  v.git_oid = c.git_oid;
  if (spec.sha256 && *spec.sha256 != c.sha256) v.state = FileState::sha256_mismatch;
  else if (spec.git_oid && *spec.git_oid != c.git_oid) v.state = FileState::git_oid_mismatch;
  else v.state = FileState::ok;
  return v;
}

namespace {
// What a verified stamp remembers of a file: if any of it changed, the file
// may have too.
std::optional<std::string> file_identity(const fs::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  auto ns = [](const timespec& t) { return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec); };
  return "file " + std::to_string(st.st_size) + " " + ns(st.st_mtim) + " " + ns(st.st_ctim) + " " +
         std::to_string(st.st_ino) + " " + std::to_string(st.st_dev) + "\n";
}
std::string stamp_text(const std::string& identity, const std::string& sha256, const std::string& git_oid) {
  return "provkit-verified 1\n" + identity + "sha256 " + sha256 + "\ngit_oid " + git_oid + "\n";
}
}  // namespace

void record_verified(const fs::path& path, const Verification& v, const fs::path& stamp) {
  if (stamp.empty() || v.state != FileState::ok) return;
  auto identity = file_identity(path);
  if (!identity) return;
  // Losing a stamp costs one re-hash, so no fsync.
  write_file_atomic(stamp, stamp_text(*identity, v.sha256, v.git_oid), fs::perms(0644), Durability::process_crash);
}

Verification verify_file_stamped(const fs::path& path, const FileSpec& spec, const fs::path& stamp) {
  std::optional<std::string> identity;
  std::string text;
  if (!stamp.empty() && (identity = file_identity(path))) {
    try {
      text = read_file(stamp);
    } catch (const Error&) {  // no stamp (yet)
    }
  }
  // "provkit-verified 1", the identity line, "sha256 <hex>", "git_oid <hex or nothing>".
  std::istringstream lines(text);
  std::string magic, ident, sha, git;
  if (identity && std::getline(lines, magic) && std::getline(lines, ident) && std::getline(lines, sha) &&
      std::getline(lines, git) && magic == "provkit-verified 1" && ident + "\n" == *identity &&
      sha.starts_with("sha256 ") && git.starts_with("git_oid ")) {
    sha = sha.substr(7);
    git = git.substr(8);
    bool vouches = sha.size() == 64 && (!spec.sha256 || *spec.sha256 == sha) && (!spec.git_oid || *spec.git_oid == git) &&
                   ident.starts_with("file " + std::to_string(spec.size) + " ");
    if (vouches) {
      Verification v;
      v.state = FileState::ok;
      v.size = spec.size;
      v.sha256 = sha;
      if (spec.git_oid) v.git_oid = git;
      v.from_stamp = true;
      return v;
    }
  }
  Verification v = verify_file(path, spec);
  record_verified(path, v, stamp);
  return v;
}

// ---- downloader -----------------------------------------------------------------

namespace {

// Re-resolves per file after a CDN refusal; more means the refusal is not about expiry.
constexpr int kMaxReresolve = 3;
// How often a split file's sidecar is rewritten while bytes arrive (and at
// every finished range): what a kill can cost is this much transfer time.
constexpr auto kSidecarInterval = std::chrono::milliseconds(250);

void pwrite_all(int fd, const char* data, std::size_t n, std::uint64_t offset, const fs::path& path,
                std::uint64_t still_needed) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      if (errno == ENOSPC || errno == EDQUOT) no_space(path, still_needed);
      io_error(path, "write error");
    }
    data += w;
    offset += static_cast<std::uint64_t>(w);
    n -= static_cast<std::size_t>(w);
  }
}

// Reserves the whole file at once, so that a full disk shows at the start.
void preallocate(int fd, std::uint64_t size, const fs::path& path, std::uint64_t still_needed) {
  if (size == 0) return;
  int rc = ::fallocate(fd, 0, 0, static_cast<off_t>(size));
  if (rc == 0) return;
  if (errno == ENOSPC || errno == EDQUOT) no_space(path, still_needed);
  // File systems without fallocate: a sparse file of the full size.
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) io_error(path, "cannot extend");
}

// A 403/410 that an expired signed URL gets: from another origin than the
// one asked (the CDN, after the Hub's redirect), or from the CDN URL a
// range reused directly.
bool cdn_url_refused(const http::Result& res, const std::string& asked, const std::string& job_url) {
  if (res.failure != http::FailureKind::none) return false;
  if (res.response.status != 403 && res.response.status != 410) return false;
  auto hub = http::Url::parse(job_url);
  auto last = http::Url::parse(res.response.url);
  auto first = http::Url::parse(asked);
  return hub && last && first && (last->origin() != hub->origin() || first->origin() != hub->origin());
}

// One file in flight: its partial file, its ranges and the transfers working on them.
struct FileFetch {
  const Job* job = nullptr;
  JobResult* result = nullptr;
  BlobLock lock;
  int fd = -1;
  std::vector<ranges::Range> ranges;  // one range: a single stream, no sidecar
  std::vector<bool> busy;             // a transfer works on ranges[i]
  fs::path sidecar;                   // "<partial>.ranges"
  std::chrono::steady_clock::time_point sidecar_written{};
  std::size_t frontier = 0;  // first incomplete range: the hash has all bytes before it
  std::uint64_t have = 0;    // bytes written, all ranges
  int transfers = 0;         // in flight
  int max_transfers = 1;
  bool ranges_confirmed = false;  // a 206 came back: more connections may start
  bool ranges_refused = false;    // the server answered a range with the whole file
  std::string cdn_url;            // where the resolve URL led; later ranges go there directly
  int reresolved = 0;
  bool failed = false;
  PrefixHasher hasher;

  bool split() const { return ranges.size() > 1; }
  bool all_complete() const {
    return std::all_of(ranges.begin(), ranges.end(), [](const ranges::Range& r) { return r.complete(); });
  }
  ~FileFetch() { done(); }
  void save_sidecar() {
    if (!split()) return;
    write_file_atomic(sidecar, ranges::format_sidecar(job->spec.size, ranges), fs::perms(0644),
                      Durability::process_crash);
    sidecar_written = std::chrono::steady_clock::now();
  }
  void remove_sidecar() {
    std::error_code ec;
    fs::remove(sidecar, ec);
  }
  // The file is finished with (renamed, kept aside or failed): another process may take it.
  void done() {
    hasher.stop();
    if (fd >= 0) ::close(fd);
    fd = -1;
    lock.release();
  }
  // Bytes [0, contiguous) may be hashed now.
  void advance_hash() {
    while (frontier < ranges.size() && ranges[frontier].complete()) ++frontier;
    hasher.advance(ranges::contiguous(ranges));
  }
  // Goes on as one stream from byte `keep`: the bytes before it stay, the
  // rest of the partial file (and its sidecar) is dropped.
  void continue_as_one_stream(std::uint64_t keep) {
    if (::ftruncate(fd, static_cast<off_t>(keep)) != 0) io_error(job->partial_path, "cannot truncate");
    remove_sidecar();
    ranges = {ranges::Range{0, job->spec.size, keep}};
    busy.assign(1, false);
    frontier = 0;
    have = keep;
    max_transfers = 1;
  }
  // Discards what is in the partial file and starts at byte 0.
  void start_over() {
    hasher.stop();
    continue_as_one_stream(0);
    result->resumed_from = 0;
    hasher.start(job->partial_path, job->spec);
  }
  // The server does not honour ranges: keep the contiguous prefix (the hash
  // has read no further) and fetch the rest again as one stream.
  void go_sequential() { continue_as_one_stream(ranges::contiguous(ranges)); }
};

// Moves content that failed verification out of the way, named by its sha256.
fs::path keep_aside(const fs::path& from, const fs::path& prefix, const std::string& sha256) {
  fs::path to = path_with_suffix(prefix, ".bad-" + sha256);
  make_parent(to);
  rename_durable(from, to);
  return to;
}

// Opens (or creates) a job's partial file and works out which bytes it
// already holds: from its sidecar when it has one, else its length (a
// single stream's partial file is its prefix).
void open_partial(FileFetch& f, const Options& options, Observer& observer) {
  const Job& job = *f.job;
  std::uint64_t size = job.spec.size;
  make_parent(job.partial_path);
  f.fd = ::open(job.partial_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (f.fd < 0) io_error(job.partial_path, "cannot open");
  struct stat st;
  if (::fstat(f.fd, &st) != 0) io_error(job.partial_path, "cannot stat");
  std::uint64_t length = static_cast<std::uint64_t>(st.st_size);
  f.sidecar = path_with_suffix(job.partial_path, ".ranges");

  std::error_code ec;
  bool had_sidecar = fs::exists(f.sidecar, ec);
  std::optional<std::vector<ranges::Range>> kept;
  if (had_sidecar) {
    try {
      kept = ranges::parse_sidecar(read_file(f.sidecar), size);
    } catch (const Error&) {
    }
  }
  if (kept && length < size) {
    // Shorter than the sidecar's file (cut by someone): trust only what is there.
    for (auto& r : *kept) r.done = std::min(r.done, length > r.start ? length - r.start : 0);
  }
  if (kept && length > size) {
    // Longer (grown by someone): the sidecar's ranges cover [0, size), the rest is nobody's.
    if (::ftruncate(f.fd, static_cast<off_t>(size)) != 0) io_error(job.partial_path, "cannot truncate");
    length = size;
  }
  if (!kept && (length > size || had_sidecar)) {
    observer.on_restart(job, length > size ? "the partial file is longer than the file; starting over"
                                           : "the partial file's range record is unreadable; starting over");
    if (::ftruncate(f.fd, 0) != 0) io_error(job.partial_path, "cannot truncate");
    f.remove_sidecar();
    length = 0;
  }
  if (kept) {
    f.ranges = std::move(*kept);
  } else {
    f.ranges = ranges::plan(size, options.connections, options.min_split_size);
    ranges::mark_prefix_done(f.ranges, length);
  }
  f.busy.assign(f.ranges.size(), false);
  f.have = ranges::done_bytes(f.ranges);
  f.max_transfers = f.split() ? std::max(1, options.connections) : 1;
  if (f.split()) {
    f.save_sidecar();  // before the file grows to its full size: a full-size file without one is a finished stream
    preallocate(f.fd, size, job.partial_path, size - f.have);
  }
  f.hasher.start(job.partial_path, job.spec);
  f.advance_hash();
}

}  // namespace

std::vector<JobResult> Downloader::run(const std::vector<Job>& jobs, Observer& observer) {
  std::vector<JobResult> results(jobs.size());
  std::deque<std::size_t> queue;

  auto take_present = [&](const Job& job, JobResult& r, const Verification& v) {
    r.outcome = Outcome::present;
    r.sha256 = v.sha256;
    r.git_oid = v.git_oid;
    r.from_stamp = v.from_stamp;
    observer.on_finish(job, r);
  };

  // Content already in place is verified (or vouched for by its stamp), not fetched again.
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    JobResult& r = results[i];
    r.path = job.spec.path;
    Verification v = verify_file_stamped(job.final_path, job.spec, job.verified_stamp);
    if (v.state == FileState::ok) {
      take_present(job, r, v);
      continue;
    }
    if (v.state != FileState::missing) {
      std::string sha = v.sha256.empty() ? sha256_file(job.final_path) : v.sha256;
      fs::path aside = keep_aside(job.final_path, job.rejected_prefix, sha);
      observer.on_restart(job, "the copy in place is wrong (" + state_name(v.state) + "); kept at " + aside.string() +
                                   ", fetching it again");
    }
    queue.push_back(i);
  }

  int parallel = std::max(1, options_.max_parallel);
  int files_in_flight = 0;
  http::Session session(options_.http);
  std::vector<std::unique_ptr<FileFetch>> files;

  auto finish_file = [&](FileFetch& f) {
    f.done();
    --files_in_flight;
    observer.on_finish(*f.job, *f.result);
  };

  // Every byte is there: verify, then rename into place.
  auto complete = [&](FileFetch& f) {
    const Job& job = *f.job;
    JobResult& r = *f.result;
    if (::fsync(f.fd) != 0) io_error(job.partial_path, "cannot fsync");
    Check c = check_hashes(f.hasher.finish(job.spec.size), job.spec);
    r.sha256 = c.sha256;
    r.git_oid = c.git_oid;
    // The last gate before the rename, whatever path led here: the hashes
    // cover the first spec.size bytes, so the file must have exactly those.
    struct stat st;
    if (::fstat(f.fd, &st) != 0) io_error(job.partial_path, "cannot stat");
    if (c.ok && static_cast<std::uint64_t>(st.st_size) != job.spec.size) {
      c.ok = false;
      c.message = "size mismatch: " + std::to_string(st.st_size) + " bytes, the manifest says " +
                  std::to_string(job.spec.size);
    }
    f.remove_sidecar();
    if (!c.ok) {
      r.outcome = Outcome::mismatch;
      r.code = ExitCode::check_failed;
      r.rejected = keep_aside(job.partial_path, job.rejected_prefix, c.sha256);
      r.message = c.message + "; the downloaded bytes are kept at " + r.rejected.string();
    } else {
      make_parent(job.final_path);
      rename_durable(job.partial_path, job.final_path);
      Verification v;
      v.state = FileState::ok;
      v.sha256 = c.sha256;
      v.git_oid = c.git_oid;
      record_verified(job.final_path, v, job.verified_stamp);
      r.outcome = Outcome::downloaded;
    }
    finish_file(f);
  };

  auto fail = [&](FileFetch& f, ExitCode code, const std::string& message) {
    if (f.failed) return;  // the first failure is the one to tell
    f.failed = true;
    f.result->outcome = Outcome::failed;
    f.result->code = code;
    f.result->message = message;
  };

  // Jobs whose lock another process holds: taken up once nothing of ours is in flight.
  std::deque<std::size_t> locked_elsewhere;
  bool wait_for_locks = false;

  std::function<void()> launch_next;
  std::function<void(FileFetch&)> start_ranges;
  std::function<void(FileFetch&, std::size_t)> start_range;

  // After a transfer of f ends: more ranges, or the file's end.
  auto settle = [&](FileFetch& f) {
    if (!f.failed && !f.ranges_refused) start_ranges(f);
    if (f.transfers > 0) return;
    if (f.failed) {
      f.save_sidecar();
      finish_file(f);
    } else if (f.all_complete()) {
      complete(f);
    } else if (f.ranges_refused) {
      f.go_sequential();
      observer.on_restart(*f.job, "the server does not honour range requests; going on as one stream from byte " +
                                      std::to_string(f.have));
      f.ranges_refused = false;
      start_ranges(f);
      return;
    }
    launch_next();
  };

  // A transfer for ranges[i] from its first missing byte to its end.
  start_range = [&](FileFetch& f, std::size_t i) {
    struct Attempt {
      std::string url;                          // asked for (the Hub's resolve URL or the CDN's)
      ExitCode abort_code = ExitCode::network;  // for an http::Abort thrown below
      std::uint64_t written = 0;
      bool stopped = false;  // aborted on purpose (range full, or whole file refused): no failure
    };
    auto at = std::make_shared<Attempt>();
    const Job& job = *f.job;
    http::Transfer t;
    // Each attempt starts at the CDN URL a range already found, else the
    // Hub's resolve URL (a fresh redirect). The token only ever goes to the Hub.
    t.request.url = job.url;
    t.before_attempt = [&f, i, at, this](http::Request& req) {
      req.url = f.cdn_url.empty() ? f.job->url : f.cdn_url;
      auto hub = http::Url::parse(f.job->url);
      auto here = http::Url::parse(req.url);
      req.bearer_token = hub && here && hub->origin() == here->origin() ? options_.bearer_token : std::string();
      // Always a bounded range, also from byte 0: CDNs have been seen
      // refusing range-less GETs of very large files.
      const ranges::Range& r = f.ranges[i];
      req.range_from = r.next();
      if (r.end > r.next()) req.range_to = r.end - 1;
      at->url = req.url;
    };
    t.on_head = [&f, i, at, &observer, &start_ranges](const http::Hop& hop) {
      const FileSpec& spec = f.job->spec;
      ranges::Range& r = f.ranges[i];
      if (hop.status == 206) {
        auto cr = http::parse_content_range(hop.headers.get("content-range").value_or(""));
        if (!cr || cr->first != r.next())
          throw http::Abort("the server answered the range request from byte " + std::to_string(r.next()) +
                            " with another range");
        if (cr->total && *cr->total != spec.size) {
          at->abort_code = ExitCode::check_failed;
          throw http::Abort("the server has " + std::to_string(*cr->total) + " bytes, the manifest says " +
                            std::to_string(spec.size));
        }
        auto hub = http::Url::parse(f.job->url);
        auto here = http::Url::parse(hop.url);
        if (hub && here && hub->origin() != here->origin()) f.cdn_url = hop.url;
        if (!f.ranges_confirmed) {
          f.ranges_confirmed = true;
          start_ranges(f);  // the other connections, straight to the CDN URL
        }
      } else if (f.split()) {
        // The whole file where a range was asked for: never written at this
        // range's offset. The file goes on as one stream once its other
        // transfers are done.
        f.ranges_refused = true;
        at->stopped = true;
        throw http::Abort("the server answered a range request with the whole file");
      } else if (r.done > 0) {
        f.start_over();
        observer.on_restart(*f.job, "the server ignored the range request; starting the file over");
      }
    };
    t.on_body = [&f, i, at, &observer](const char* data, std::size_t n) {
      ranges::Range& r = f.ranges[i];
      bool overrun = n > r.missing();
      if (overrun && !f.split()) {
        at->abort_code = ExitCode::check_failed;
        throw http::Abort("the server sent more than the manifest's " + std::to_string(f.job->spec.size) + " bytes");
      }
      // A range answered past its end (the bytes after it belong to other
      // ranges): take what is this range's and stop the transfer there.
      if (overrun) n = static_cast<std::size_t>(r.missing());
      pwrite_all(f.fd, data, n, r.next(), f.job->partial_path, f.job->spec.size - f.have);
      r.done += n;
      f.have += n;
      at->written += n;
      f.result->bytes_transferred += n;
      if (i == f.frontier) f.advance_hash();
      if (f.split() && (r.complete() || std::chrono::steady_clock::now() - f.sidecar_written > kSidecarInterval))
        f.save_sidecar();
      observer.on_progress(*f.job, f.have);
      if (overrun) {
        at->stopped = true;
        throw http::Abort("range complete");
      }
    };
    t.on_retry = [&f, &observer](const std::string& why, double delay) { observer.on_retry(*f.job, why, delay); };
    t.on_done = [&f, i, at, &observer, &fail, &settle, &start_range, this](http::Result& res) {
      --f.transfers;
      f.busy[i] = false;
      ranges::Range& r = f.ranges[i];
      if (res.failure == http::FailureKind::aborted && at->stopped) {
        // Range full, or taken up by settle() (the file goes on as one stream).
      } else if (res.failure != http::FailureKind::none) {
        fail(f, res.failure == http::FailureKind::aborted ? at->abort_code : ExitCode::network, res.message);
      } else if (cdn_url_refused(res, at->url, f.job->url) && f.reresolved < kMaxReresolve) {
        // Signed CDN URLs expire (about an hour on the Hub): resolve the file
        // through the Hub again and carry on from where the range is. Ranges
        // refused with a URL already replaced do not count again.
        if (at->url == f.cdn_url || at->url == f.job->url) {
          ++f.reresolved;
          f.cdn_url.clear();
          observer.on_retry(*f.job,
                            "the CDN URL was refused (HTTP " + std::to_string(res.response.status) +
                                "), most likely expired; resolving it again through the Hub",
                            0);
        }
        if (!f.failed) {
          start_range(f, i);
          return;
        }
      } else if (!res.ok()) {
        Error e = hub::hub_error(options_.repo, f.job->spec.path, res.response.status, res.response.headers,
                                 !options_.bearer_token.empty());
        fail(f, e.code(), e.what());
      } else if (!r.complete() && (at->written == 0 || !f.split())) {
        fail(f, ExitCode::network,
             "the transfer ended after " + std::to_string(f.have) + " of " + std::to_string(f.job->spec.size) +
                 " bytes (kept for the next run)");
      }
      // A split range that ended early with progress is simply started again by settle().
      settle(f);
    };
    ++f.transfers;
    f.busy[i] = true;
    session.add(std::move(t));
  };

  // Starts transfers for f's incomplete ranges, lowest first (the hash
  // follows the contiguous prefix), up to its connection count; only one
  // until a 206 shows that the server honours ranges.
  start_ranges = [&](FileFetch& f) {
    int limit = f.ranges_confirmed ? f.max_transfers : 1;
    for (std::size_t i = f.frontier; i < f.ranges.size() && f.transfers < limit; ++i)
      if (!f.ranges[i].complete() && !f.busy[i]) start_range(f, i);
  };

  launch_next = [&] {
    while (!queue.empty() && files_in_flight < parallel) {
      std::size_t i = queue.front();
      queue.pop_front();
      const Job& job = jobs[i];
      auto fetch = std::make_unique<FileFetch>();
      // Never wait for a lock while transfers of ours are in flight: the other
      // process may be waiting for one of ours.
      if (!fetch->lock.acquire(job.lock_path, wait_for_locks)) {
        locked_elsewhere.push_back(i);
        continue;
      }
      // Two files with the same content share one blob: the first one fetched
      // serves both (or another process fetched it while we waited for its lock).
      if (std::error_code ec; fs::exists(job.final_path, ec)) {
        Verification v = verify_file_stamped(job.final_path, job.spec, job.verified_stamp);
        if (v.state == FileState::ok) {
          take_present(job, results[i], v);
          continue;
        }
      }
      FileFetch& f = *fetch;
      files.push_back(std::move(fetch));
      f.job = &job;
      f.result = &results[i];
      ++files_in_flight;
      open_partial(f, options_, observer);
      f.result->resumed_from = f.have;
      observer.on_start(job, f.have, f.ranges.size());
      if (f.all_complete()) {  // all bytes already there (or an empty file)
        complete(f);
        continue;
      }
      start_ranges(f);
    }
  };

  launch_next();
  session.run();
  // Files another process is fetching: wait for its lock, one file at a time
  // (holding no other lock while waiting, so two processes cannot deadlock),
  // then find the file in place or fetch what it left.
  wait_for_locks = true;
  while (!locked_elsewhere.empty()) {
    queue.push_back(locked_elsewhere.front());
    locked_elsewhere.pop_front();
    launch_next();
    session.run();
  }
  return results;
}

// ---- assembly -----------------------------------------------------------------

namespace {
// The state the stamp remembers: each part's and the output's size, mtime
// and inode, and what the output must be.
std::string describe_state(const AssembleJob& job) {
  auto stat_line = [](const char* kind, const fs::path& p) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return std::string(kind) + " missing " + p.string() + "\n";
    return std::string(kind) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino) + " " + p.string() + "\n";
  };
  std::string s = "provkit-assemble 1\n";
  for (const auto& p : job.parts) s += stat_line("part", p);
  s += stat_line("output", job.output);
  s += "expect " + job.sha256.value_or("-") + " " + (job.size ? std::to_string(*job.size) : "-") + "\n";
  return s;
}
}  // namespace

AssembleResult assemble(const AssembleJob& job) {
  AssembleResult r;
  std::error_code ec;
  if (fs::exists(job.output, ec) && fs::exists(job.stamp, ec)) {
    std::string stamp;
    try {
      stamp = read_file(job.stamp);
    } catch (const Error&) {
    }
    std::string state = describe_state(job);
    // Stamp = state + "result <sha256> <size>\n".
    if (stamp.starts_with(state)) {
      std::string rest = stamp.substr(state.size());
      if (rest.starts_with("result ") && rest.size() > 7 + 64) {
        r.outcome = AssembleOutcome::unchanged;
        r.sha256 = rest.substr(7, 64);
        r.size = std::stoull(rest.substr(7 + 65));
        return r;
      }
    }
  }

  make_parent(job.output);
  fs::path tmp = temp_path_beside(job.output, "assemble");
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) io_error(tmp, "cannot create");
  Hasher sha(DigestKind::sha256);
  std::unique_ptr<char[]> buf(new char[kReadBuffer]);
  try {
    for (const auto& part : job.parts) {
      int in = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
      if (in < 0) io_error(part, "cannot open part");
      ::posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
      for (;;) {
        ssize_t n = ::read(in, buf.get(), kReadBuffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          int e = errno;
          ::close(in);
          errno = e;
          io_error(part, "read error");
        }
        if (n == 0) break;
        sha.update(buf.get(), static_cast<std::size_t>(n));
        write_all(out, buf.get(), static_cast<std::size_t>(n), tmp);
        r.size += static_cast<std::uint64_t>(n);
      }
      ::close(in);
    }
    if (::fsync(out) != 0) io_error(tmp, "cannot fsync");
  } catch (...) {
    ::close(out);
    fs::remove(tmp, ec);
    throw;
  }
  ::close(out);
  r.sha256 = sha.hex_digest();
  std::string problem;
  if (job.size && *job.size != r.size)
    problem = "size mismatch: expected " + std::to_string(*job.size) + " bytes, got " + std::to_string(r.size);
  else if (job.sha256 && *job.sha256 != r.sha256)
    problem = "sha256 mismatch: expected " + *job.sha256 + ", got " + r.sha256;
  if (!problem.empty()) {
    r.outcome = AssembleOutcome::mismatch;
    r.rejected = path_with_suffix(job.output, ".bad-" + r.sha256);
    rename_durable(tmp, r.rejected);
    r.message = problem + "; the assembled bytes are kept at " + r.rejected.string();
    return r;
  }
  rename_durable(tmp, job.output);
  write_file_atomic(job.stamp, describe_state(job) + "result " + r.sha256 + " " + std::to_string(r.size) + "\n");
  r.outcome = AssembleOutcome::assembled;
  return r;
}

}  // namespace provkit::fetch
