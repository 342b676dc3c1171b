#include "engine.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "digest.hpp"
#include "io.hpp"
#include "provkit/http/token.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"

namespace provkit::download {

namespace {
// Re-resolves per file after a refusal the source calls expiry; more means
// the refusal is not about expiry.
constexpr int kMaxReresolve = 3;
}  // namespace

std::string_view state_name(TransferState s) {
  switch (s) {
    case TransferState::queued: return "queued";
    case TransferState::locked_elsewhere: return "locked elsewhere";
    case TransferState::probing: return "probing";
    case TransferState::ranged: return "ranged";
    case TransferState::streaming: return "streaming";
    case TransferState::leaving_ranges: return "leaving ranges";
    case TransferState::failing: return "failing";
    case TransferState::done: return "done";
    case TransferState::failed: return "failed";
  }
  return "?";
}

// ---- FileTransfer -----------------------------------------------------------------

FileTransfer::FileTransfer(Run& run, const download::Job& job, download::JobResult& result)
    : run_(run), job_(job), result_(result), partial_(job) {}

bool FileTransfer::lock(bool wait) {
  if (partial_.lock(wait)) return true;
  state_ = TransferState::locked_elsewhere;
  return false;
}

void FileTransfer::take_present(const download::Verification& v) {
  result_.outcome = download::Outcome::present;
  result_.sha256 = v.sha256;
  result_.git_oid = v.git_oid;
  result_.from_stamp = v.from_stamp;
  result_.warning = v.stamp_warning;
  partial_.close();
  state_ = TransferState::done;
  run_.observer_.on_finish(job_, result_);
}

void FileTransfer::start() {
  partial_.open(run_.options_.connections, run_.options_.min_split_size, run_.observer_);
  busy_.assign(partial_.ranges().size(), false);
  result_.resumed_from = partial_.have();
  state_ = partial_.split() ? TransferState::probing : TransferState::streaming;
  run_.observer_.on_start(job_, partial_.have(), partial_.ranges().size());
  if (partial_.all_complete()) {  // all bytes already there (or an empty file)
    complete();
    return;
  }
  resolved_ = run_.source_.resolve(job_);
  start_ranges();
}

void FileTransfer::start_ranges() {
  int limit = state_ == TransferState::ranged ? run_.ramp_.allowed() : 1;
  auto& ranges = partial_.ranges();
  for (std::size_t i = partial_.frontier(); i < ranges.size() && transfers_ < limit; ++i)
    if (!ranges[i].complete() && !busy_[i]) start_range(i);
}

void FileTransfer::start_range(std::size_t i) {
  auto attempt = std::make_shared<RangeAttempt>(*this, i);
  ++transfers_;
  busy_[i] = true;
  run_.session_.add(attempt->transfer());
}

void FileTransfer::settle() {
  bool going = state_ == TransferState::probing || state_ == TransferState::ranged ||
               state_ == TransferState::streaming;
  if (going) start_ranges();
  if (transfers_ > 0) return;
  if (state_ == TransferState::failing) {
    partial_.save_sidecar();
    finish();
  } else if (partial_.all_complete()) {
    complete();
  } else if (state_ == TransferState::leaving_ranges) {
    partial_.go_sequential();
    busy_.assign(1, false);
    state_ = TransferState::streaming;
    run_.observer_.on_restart(job_, "the server does not honour range requests; going on as one stream from byte " +
                                        std::to_string(partial_.have()));
    start_ranges();
    return;
  }
  run_.launch_next();
}

void FileTransfer::complete() {
  if (int err = partial_.finish_flushing()) {
    errno = err;
    io_error(job_.partial_path, "cannot write back");
  }
  if (::fsync(partial_.fd()) != 0) io_error(job_.partial_path, "cannot fsync");
  Check c = check_hashes(partial_.finish_hash(), job_.spec);
  result_.sha256 = c.sha256;
  result_.git_oid = c.git_oid;
  // The last gate before the rename, whatever path led here: the hashes
  // cover the first spec.size bytes, so the file must have exactly those.
  struct stat st;
  if (::fstat(partial_.fd(), &st) != 0) io_error(job_.partial_path, "cannot stat");
  if (c.ok() && static_cast<std::uint64_t>(st.st_size) != job_.spec.size) {
    c.mismatch = download::Mismatch::size;
    c.message = "size mismatch: " + std::to_string(st.st_size) + " bytes, the manifest says " +
                std::to_string(job_.spec.size);
  }
  partial_.remove_sidecar();
  const util::Root& root = partial_.root();
  // Publish what was hashed: the name must still be the descriptor's own
  // file right before the rename (bytes renamed onto the partial's name by
  // someone else are never published under the verified name).
  struct stat named;
  if (!root.stat(job_.partial_path, named) || named.st_dev != st.st_dev || named.st_ino != st.st_ino) {
    fail(ExitCode::check_failed,
         job_.partial_path.string() +
             ": replaced while it was being fetched and hashed; nothing published (a rerun fetches it again)");
    finish();
    return;
  }
  if (!c.ok()) {
    result_.outcome = download::Outcome::mismatch;
    result_.mismatch = c.mismatch;
    result_.code = ExitCode::check_failed;
    result_.rejected = keep_aside(root, job_.partial_path, job_.rejected_prefix, c.sha256);
    result_.message = c.message + "; the downloaded bytes are kept at " + result_.rejected.string();
  } else {
    root.publish(partial_.fd(), job_.partial_path, job_.final_path);
    remove_rejected(root, job_.rejected_prefix);  // the good copy is in place: earlier wrong ones go
    download::Verification v;
    v.state = download::FileState::ok;
    v.sha256 = c.sha256;
    v.git_oid = c.git_oid;
    result_.warning = download::record_verified(root, job_.final_path, v, job_.verified_stamp);
    result_.outcome = download::Outcome::downloaded;
  }
  finish();
}

void FileTransfer::fail(ExitCode code, const std::string& message) {
  if (state_ == TransferState::failing) return;
  state_ = TransferState::failing;
  result_.outcome = download::Outcome::failed;
  result_.code = code;
  result_.message = message;
}

void FileTransfer::finish() {
  partial_.close();
  state_ = state_ == TransferState::failing ? TransferState::failed : TransferState::done;
  run_.file_finished(*this);
}

void FileTransfer::restart_stream() {
  partial_.start_over();
  busy_.assign(1, true);  // the transfer that got the whole file goes on with it
  result_.resumed_from = 0;
  run_.observer_.on_restart(job_, "the server ignored the range request; starting the file over");
}

void FileTransfer::reresolve(const http::Result& res) {
  ++reresolved_;
  redirected_.clear();
  resolved_ = run_.source_.resolve(job_);
  run_.observer_.on_retry(job_, run_.source_.expired_note(res), 0);
}

void FileTransfer::flush_gathered() {
  gathering_ = false;
  partial_.flush_all();
}

// ---- RangeAttempt -----------------------------------------------------------------

http::Transfer RangeAttempt::transfer() {
  http::Transfer t;
  t.request.url = file_.resolved_;
  auto self = shared_from_this();
  t.before_attempt = [self](http::Request& req) { self->before_try(req); };
  t.on_head = [self](const http::Hop& hop) { self->on_head(hop); };
  t.on_body = [self](const char* data, std::size_t n) { self->on_body(data, n); };
  t.on_retry = [self](const std::string& why, double delay) {
    self->file_.run_.observer_.on_retry(self->file_.job_, why, delay);
  };
  t.on_done = [self](http::Result& res) { self->on_done(res); };
  return t;
}

void RangeAttempt::before_try(http::Request& req) {
  file_.partial_.flush(range_);  // a retry asks from the first byte not yet received
  req.url = file_.redirected_.empty() ? file_.resolved_ : file_.redirected_;
  req.bearer_token = file_.run_.source_.bearer_token(file_.resolved_, req.url);
  const ranges::Range& r = file_.partial_.ranges()[range_];
  req.range_from = r.next();
  if (r.end > r.next()) req.range_to = r.end - 1;
  url_ = req.url;
}

void RangeAttempt::on_head(const http::Hop& hop) {
  const download::FileSpec& spec = file_.job_.spec;
  const ranges::Range& r = file_.partial_.ranges()[range_];
  if (hop.status == 206) {
    auto cr = http::parse_content_range(hop.headers.get("content-range").value_or(""));
    if (!cr || cr->first != r.next())
      throw http::Abort("the server answered the range request from byte " + std::to_string(r.next()) +
                        " with another range");
    if (cr->total && *cr->total != spec.size) {
      abort_code_ = ExitCode::check_failed;
      throw http::Abort("the server has " + std::to_string(*cr->total) + " bytes, the manifest says " +
                        std::to_string(spec.size));
    }
    if (!http::same_origin(file_.resolved_, hop.url)) file_.redirected_ = hop.url;
    if (file_.state_ == TransferState::probing) {
      file_.state_ = TransferState::ranged;
      file_.start_ranges();  // the other connections, straight to where the resolve led
    }
  } else if (file_.partial_.split()) {
    // The whole file where a range was asked for: never written at this
    // range's offset. The file goes on as one stream once its other
    // transfers are done.
    if (file_.state_ != TransferState::failing) file_.state_ = TransferState::leaving_ranges;
    stopped_ = true;
    throw http::Abort("the server answered a range request with the whole file");
  } else if (r.done > 0) {
    file_.restart_stream();
  }
}

void RangeAttempt::on_body(const char* data, std::size_t n) {
  PartialFile& partial = file_.partial_;
  std::uint64_t missing = partial.missing(range_);
  bool overrun = n > missing;
  if (overrun && !partial.split()) {
    abort_code_ = ExitCode::check_failed;
    throw http::Abort("the server sent more than the manifest's " + std::to_string(file_.job_.spec.size) + " bytes");
  }
  // A range answered past its end (the bytes after it belong to other
  // ranges): take what is this range's and stop the transfer there.
  if (overrun) n = static_cast<std::size_t>(missing);
  partial.write(range_, data, n);
  if (partial.gathering(range_) && !file_.gathering_) {
    file_.gathering_ = true;
    file_.run_.gathering_.push_back(&file_);
  }
  written_ += n;
  file_.result_.bytes_transferred += n;
  file_.run_.received(n);
  partial.save_sidecar_now_and_then(range_);
  file_.run_.observer_.on_progress(file_.job_, partial.have());
  if (overrun) {
    stopped_ = true;
    throw http::Abort("range complete");
  }
}

void RangeAttempt::on_done(http::Result& res) {
  FileTransfer& f = file_;
  f.partial_.flush(range_);
  --f.transfers_;
  f.busy_[range_] = false;
  const ranges::Range& r = f.partial_.ranges()[range_];
  Source& source = f.run_.source_;
  if (res.failure == http::FailureKind::aborted && stopped_) {
    // Range full, or taken up by settle() (the file goes on as one stream).
  } else if (res.failure != http::FailureKind::none) {
    f.fail(res.failure == http::FailureKind::aborted ? abort_code_ : ExitCode::network, res.message);
  } else if (source.expired(res, url_, f.resolved_) && f.reresolved_ < kMaxReresolve) {
    // Redirect targets expire (signed CDN URLs: about an hour on the Hub):
    // resolve the file again and carry on from where the range is. Ranges
    // refused with a URL already replaced do not count again.
    if (url_ == f.redirected_ || url_ == f.resolved_) f.reresolve(res);
    if (f.state_ != TransferState::failing) {
      f.start_range(range_);
      return;
    }
  } else if (!res.ok()) {
    Error e = source.refusal(f.job_, res.response);
    f.fail(e.code(), e.what());
  } else if (!r.complete() && (written_ == 0 || !f.partial_.split())) {
    f.fail(ExitCode::network, "the transfer ended after " + std::to_string(f.partial_.have()) + " of " +
                                  std::to_string(f.job_.spec.size) + " bytes (kept for the next run)");
  }
  // A split range that ended early with progress is simply started again by settle().
  f.settle();
}

// ---- Run --------------------------------------------------------------------------

Run::Run(const download::Options& options, Source& source, download::Observer& observer,
         const std::vector<download::Job>& jobs)
    : options_(options),
      source_(source),
      observer_(observer),
      jobs_(jobs),
      results_(jobs.size()),
      ramp_(options.connections),
      session_(options.http) {
  files_.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i)
    files_.push_back(std::make_unique<FileTransfer>(*this, jobs[i], results_[i]));
  session_.on_round_end([this] { flush_gathered(); });
}

void Run::received(std::size_t n) {
  received_ += n;
  if (ramp_.settled() || !ramp_.observe(received_, std::chrono::steady_clock::now())) return;
  for (auto& f : files_)
    if (f->state() == TransferState::ranged) f->start_ranges();
}

void Run::flush_gathered() {
  for (FileTransfer* f : gathering_) f->flush_gathered();
  gathering_.clear();
}

std::vector<download::JobResult> Run::run() {
  // Content already in place is verified (or vouched for by its stamp), not
  // fetched again. A wrong copy is moved aside only under the blob's lock
  // (launch_next): another run may be publishing the right one meanwhile.
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const download::Job& job = jobs_[i];
    results_[i].path = job.spec.path;
    download::Verification v = download::verify_file_stamped(files_[i]->root(), job.final_path, job.spec,
                                                             job.verified_stamp);
    if (v.state == download::FileState::ok) {
      files_[i]->take_present(v);
      continue;
    }
    queue_.push_back(i);
  }

  launch_next();
  session_.run();
  // Files another process is fetching: wait for its lock, one file at a time
  // (holding no other lock while waiting, so two processes cannot deadlock),
  // then find the file in place or fetch what it left.
  wait_for_locks_ = true;
  while (!locked_elsewhere_.empty()) {
    queue_.push_back(locked_elsewhere_.front());
    locked_elsewhere_.pop_front();
    launch_next();
    session_.run();
  }
  return std::move(results_);
}

void Run::launch_next() {
  int parallel = std::max(1, options_.max_parallel);
  while (!queue_.empty() && in_flight_ < parallel) {
    std::size_t i = queue_.front();
    queue_.pop_front();
    const download::Job& job = jobs_[i];
    FileTransfer& f = *files_[i];
    // Never wait for a lock while transfers of ours are in flight: the other
    // process may be waiting for one of ours.
    if (!f.lock(wait_for_locks_)) {
      locked_elsewhere_.push_back(i);
      continue;
    }
    // Two files with the same content share one blob: the first one fetched
    // serves both (or another process fetched it while we waited for its
    // lock). What is there is judged again now that the lock is held.
    struct stat st;
    if (f.root().stat(job.final_path, st)) {
      download::Verification v = download::verify_file_stamped(f.root(), job.final_path, job.spec, job.verified_stamp);
      if (v.state == download::FileState::ok) {
        f.take_present(v);
        continue;
      }
      std::string sha = v.sha256;
      if (sha.empty() && v.state != download::FileState::missing) sha = util::sha256_file(job.final_path);
      if (sha.empty()) sha = "unreadable";  // a link, FIFO or device where the file should be
      fs::path aside = keep_aside(f.root(), job.final_path, job.rejected_prefix, sha);
      observer_.on_restart(job, "the copy in place is wrong (" +
                                    (v.state == download::FileState::missing ? std::string("not a regular file")
                                                                             : download::state_name(v.state)) +
                                    "); kept at " + aside.string() + ", fetching it again");
    }
    ++in_flight_;
    f.start();
  }
}

void Run::file_finished(FileTransfer& f) {
  --in_flight_;
  observer_.on_finish(f.job(), f.result());
}

}  // namespace provkit::download

namespace provkit::download {

std::vector<JobResult> Downloader::run(const std::vector<Job>& jobs, Observer& observer) {
  return download::Run(options_, source_, observer, jobs).run();
}

}  // namespace provkit::download
