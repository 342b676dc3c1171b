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
#include <thread>

#include "provkit/fsutil.hpp"
#include "provkit/hash.hpp"

namespace provkit::fetch {

namespace {

constexpr std::size_t kReadBuffer = 4 * 1024 * 1024;

[[noreturn]] void io_error(const fs::path& path, const std::string& what) {
  throw Error(ExitCode::check_failed, path.string() + ": " + what + ": " + std::strerror(errno));
}

// `still_needed`: bytes this file still needs on disk, said when the disk is full.
void write_all(int fd, const char* data, std::size_t n, const fs::path& path, std::uint64_t still_needed = 0) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == ENOSPC || errno == EDQUOT) && still_needed > 0)
      throw Error(ExitCode::check_failed, path.string() + ": no space left on the device; " +
                                              std::to_string(still_needed) +
                                              " more bytes are needed for this file (what is there is kept, "
                                              "and a rerun resumes once there is room)");
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

// Hashes on a worker thread, so that receiving and writing never wait for
// sha256: one stream hashes at about 1.5-2 GB/s, slower than a local network
// can deliver. Bytes are copied into a bounded queue (kMaxQueued).
class BackgroundHashes {
 public:
  BackgroundHashes() : worker_([this] { loop(); }) {}
  ~BackgroundHashes() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  BackgroundHashes(const BackgroundHashes&) = delete;
  BackgroundHashes& operator=(const BackgroundHashes&) = delete;

  void reset(const FileSpec& spec) {
    drain();
    hashes_.reset(spec);
  }
  void update(const char* data, std::size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return queued_ < kMaxQueued; });
    // Reuse a hashed block's buffer: a fresh allocation per received block
    // costs an mmap, page faults and an munmap each time (measured: about a
    // quarter of the fetch's CPU on a 4 GiB file).
    std::vector<char> buf;
    if (!spare_.empty()) {
      buf = std::move(spare_.back());
      spare_.pop_back();
    }
    lock.unlock();
    buf.assign(data, data + n);
    lock.lock();
    queued_ += n;
    queue_.push_back(std::move(buf));
    cv_.notify_all();
  }
  // Every byte given so far hashed; the hashes are then the caller's to finalise.
  Hashes& finish() {
    drain();
    return hashes_;
  }

 private:
  static constexpr std::size_t kMaxQueued = 64 * 1024 * 1024;
  static constexpr std::size_t kMaxSpare = 32;

  void drain() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      std::vector<char> buf = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      hashes_.update(buf.data(), buf.size());
      lock.lock();
      busy_ = false;
      queued_ -= buf.size();
      if (spare_.size() < kMaxSpare) {
        buf.clear();
        spare_.push_back(std::move(buf));
      }
      cv_.notify_all();
    }
  }

  Hashes hashes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> queue_;
  std::vector<std::vector<char>> spare_;  // hashed buffers, kept for reuse
  std::size_t queued_ = 0;
  bool busy_ = false;
  bool stop_ = false;
  std::thread worker_;  // last: starts after the members it uses
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

// ---- downloader -----------------------------------------------------------------

namespace {

// Re-resolves per file after a CDN refusal; more means the refusal is not about expiry.
constexpr int kMaxReresolve = 3;

// A 403/410 from another origin than the one asked (the CDN, after the Hub's
// redirect): what an expired signed URL gets.
bool cdn_url_expired(const http::Result& res) {
  if (res.failure != http::FailureKind::none) return false;
  if (res.response.status != 403 && res.response.status != 410) return false;
  if (res.response.hops.size() < 2) return false;
  auto first = http::Url::parse(res.response.hops.front().url);
  auto last = http::Url::parse(res.response.url);
  return first && last && first->origin() != last->origin();
}

struct Live {
  const Job* job = nullptr;
  int reresolved = 0;  // times the CDN URL was resolved again
  JobResult* result = nullptr;
  BlobLock lock;
  BackgroundHashes hashes;
  int fd = -1;
  std::uint64_t have = 0;
  ExitCode abort_code = ExitCode::network;

  ~Live() {
    if (fd >= 0) ::close(fd);
  }
  void close_fd() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  // The file is finished with (renamed, kept aside or failed): another process may take it.
  void done() {
    close_fd();
    lock.release();
  }
  // Discards what is in the partial file and starts at byte 0.
  void start_over() {
    if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) io_error(job->partial_path, "cannot truncate");
    have = 0;
    hashes.reset(job->spec);
    result->resumed_from = 0;
  }
};

// Moves content that failed verification out of the way, named by its sha256.
fs::path keep_aside(const fs::path& from, const fs::path& prefix, const std::string& sha256) {
  fs::path to = prefix.string() + ".bad-" + sha256;
  make_parent(to);
  rename_durable(from, to);
  return to;
}

}  // namespace

std::vector<JobResult> Downloader::run(const std::vector<Job>& jobs, Observer& observer) {
  std::vector<JobResult> results(jobs.size());
  std::deque<std::size_t> queue;

  // Content already in place is verified, not fetched again.
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    JobResult& r = results[i];
    r.path = job.spec.path;
    Verification v = verify_file(job.final_path, job.spec);
    if (v.state == FileState::ok) {
      r.outcome = Outcome::present;
      r.sha256 = v.sha256;
      r.git_oid = v.git_oid;
      observer.on_finish(job, r);
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
  http::Session session(options_.http);
  std::vector<std::unique_ptr<Live>> lives;

  // Called when a file's bytes are all there: verify, then rename into place.
  auto complete = [&](Live& l) {
    const Job& job = *l.job;
    JobResult& r = *l.result;
    if (::fsync(l.fd) != 0) io_error(job.partial_path, "cannot fsync");
    l.close_fd();
    Check c = check_hashes(l.hashes.finish(), job.spec);
    r.sha256 = c.sha256;
    r.git_oid = c.git_oid;
    if (!c.ok) {
      r.outcome = Outcome::mismatch;
      r.code = ExitCode::check_failed;
      r.rejected = keep_aside(job.partial_path, job.rejected_prefix, c.sha256);
      r.message = c.message + "; the downloaded bytes are kept at " + r.rejected.string();
    } else {
      make_parent(job.final_path);
      rename_durable(job.partial_path, job.final_path);
      r.outcome = Outcome::downloaded;
    }
    l.done();
    observer.on_finish(job, r);
  };

  // Jobs whose lock another process holds: taken up once nothing of ours is in flight.
  std::deque<std::size_t> locked_elsewhere;
  bool wait_for_locks = false;

  std::function<void()> launch_next;
  // The transfer of a file from l.have on: every attempt starts at the Hub's
  // resolve URL (a fresh redirect to the CDN each time).
  std::function<http::Transfer(Live&)> make_transfer = [&](Live& l) {
    http::Transfer t;
    t.request.url = l.job->url;
    t.request.bearer_token = options_.bearer_token;
    // Always a range, also from byte 0: CDNs have been seen refusing range-less
    // GETs of very large files.
    t.before_attempt = [&l](http::Request& req) { req.range_from = l.have; };
    t.on_head = [&l, &observer](const http::Hop& hop) {
      const FileSpec& spec = l.job->spec;
      if (hop.status == 206) {
        auto cr = http::parse_content_range(hop.headers.get("content-range").value_or(""));
        if (!cr || cr->first != l.have)
          throw http::Abort("the server answered the range request from byte " + std::to_string(l.have) +
                            " with another range");
        if (cr->total && *cr->total != spec.size) {
          l.abort_code = ExitCode::check_failed;
          throw http::Abort("the server has " + std::to_string(*cr->total) + " bytes, the manifest says " +
                            std::to_string(spec.size));
        }
      } else if (l.have > 0) {
        // A whole body where a range was asked for: start over, never append.
        l.start_over();
        observer.on_restart(*l.job, "the server ignored the range request; starting the file over");
      }
    };
    t.on_body = [&l, &observer](const char* data, std::size_t n) {
      if (l.have + n > l.job->spec.size) {
        l.abort_code = ExitCode::check_failed;
        throw http::Abort("the server sent more than the manifest's " + std::to_string(l.job->spec.size) + " bytes");
      }
      write_all(l.fd, data, n, l.job->partial_path, l.job->spec.size - l.have);
      l.hashes.update(data, n);
      l.have += n;
      l.result->bytes_transferred += n;
      observer.on_progress(*l.job, l.have);
    };
    t.on_retry = [&l, &observer](const std::string& why, double delay) { observer.on_retry(*l.job, why, delay); };
    t.on_done = [&l, &observer, &complete, &launch_next, &session, &make_transfer, this](http::Result& res) {
      JobResult& r = *l.result;
      if (res.failure != http::FailureKind::none) {
        r.outcome = Outcome::failed;
        r.code = res.failure == http::FailureKind::aborted ? l.abort_code : ExitCode::network;
        r.message = res.message;
        l.done();
        observer.on_finish(*l.job, r);
      } else if (cdn_url_expired(res) && l.reresolved < kMaxReresolve) {
        // Signed CDN URLs expire (about an hour on the Hub): resolve the file
        // through the Hub again for a fresh one and carry on from l.have.
        ++l.reresolved;
        observer.on_retry(*l.job,
                          "the CDN URL was refused (HTTP " + std::to_string(res.response.status) +
                              "), most likely expired; resolving it again through the Hub",
                          0);
        session.add(make_transfer(l));
        return;  // the file keeps its slot
      } else if (!res.ok()) {
        Error e = hub::hub_error(options_.repo, l.job->spec.path, res.response.status, res.response.headers,
                                 !options_.bearer_token.empty());
        r.outcome = Outcome::failed;
        r.code = e.code();
        r.message = e.what();
        l.done();
        observer.on_finish(*l.job, r);
      } else if (l.have != l.job->spec.size) {
        r.outcome = Outcome::failed;
        r.code = ExitCode::network;
        r.message = "the transfer ended after " + std::to_string(l.have) + " of " +
                    std::to_string(l.job->spec.size) + " bytes (kept for the next run)";
        l.done();
        observer.on_finish(*l.job, r);
      } else {
        complete(l);
      }
      launch_next();
    };
    return t;
  };

  launch_next = [&] {
    while (!queue.empty()) {
      std::size_t i = queue.front();
      queue.pop_front();
      const Job& job = jobs[i];
      auto live = std::make_unique<Live>();
      // Never wait for a lock while transfers of ours are in flight: the other
      // process may be waiting for one of ours.
      if (!live->lock.acquire(job.lock_path, wait_for_locks)) {
        locked_elsewhere.push_back(i);
        continue;
      }
      // Two files with the same content share one blob: the first one fetched
      // serves both (or another process fetched it while we waited for its lock).
      if (std::error_code ec; fs::exists(job.final_path, ec)) {
        Verification v = verify_file(job.final_path, job.spec);
        if (v.state == FileState::ok) {
          JobResult& r = results[i];
          r.outcome = Outcome::present;
          r.sha256 = v.sha256;
          r.git_oid = v.git_oid;
          observer.on_finish(job, r);
          continue;
        }
      }
      Live& l = *live;
      lives.push_back(std::move(live));
      l.job = &job;
      l.result = &results[i];
      l.hashes.reset(job.spec);
      make_parent(job.partial_path);
      l.fd = ::open(job.partial_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (l.fd < 0) io_error(job.partial_path, "cannot open");
      struct stat st;
      if (::fstat(l.fd, &st) != 0) io_error(job.partial_path, "cannot stat");
      std::uint64_t kept = static_cast<std::uint64_t>(st.st_size);
      if (kept > job.spec.size) {  // longer than the file can be: useless
        observer.on_restart(job, "the partial file is longer than the file; starting over");
        kept = 0;
        if (::ftruncate(l.fd, 0) != 0) io_error(job.partial_path, "cannot truncate");
      }
      // Resume: the kept prefix is read once to seed the hashes.
      if (kept > 0 && hash_file_prefix(job.partial_path, kept, l.hashes) != kept)
        throw Error(ExitCode::check_failed, job.partial_path.string() + ": shorter than it was a moment ago");
      if (::lseek(l.fd, static_cast<off_t>(kept), SEEK_SET) < 0) io_error(job.partial_path, "cannot seek");
      l.have = kept;
      l.result->resumed_from = kept;
      observer.on_start(job, kept);
      if (kept == job.spec.size) {  // all bytes already there (or an empty file)
        complete(l);
        continue;
      }

      session.add(make_transfer(l));
      return;  // one file per call; on_done launches the next
    }
  };

  for (int k = 0; k < parallel && !queue.empty(); ++k) launch_next();
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
    r.rejected = job.output.string() + ".bad-" + r.sha256;
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
