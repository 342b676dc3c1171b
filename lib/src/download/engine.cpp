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
#include "provkit/util/log.hpp"

namespace provkit::download {

namespace {
// Re-resolves per file after a refusal the source calls expiry; more means
// the refusal is not about expiry.
constexpr int kMaxReresolve = 3;

// A line about one file, built only when tracing is on.
template <class Make>
void trace(const download::Job& job, Make&& make) {
  util::log::debug("download", [&] { return job.spec.path + ": " + std::string(make()); });
}
}  // namespace

// ---- FileTransfer -----------------------------------------------------------------
//
// The file's life is the table in transfer_state.hpp; apply() is the one
// place its state changes. What each answer of a range means is judged by
// the RangeAttempt (transfer_state.hpp's judge_*), which reports it here.

FileTransfer::FileTransfer(Scheduler& run, const download::Options& options, Source& source,
                           download::Observer& observer, download::Job job, download::JobResult& result)
    : run_(run),
      options_(options),
      source_(source),
      observer_(observer),
      job_(std::move(job)),
      result_(result),
      partial_(job_) {}

void FileTransfer::apply(TransferEvent event) {
  TransferState to = transition(state_, event);
  if (to != state_)
    util::log::debug("download", [&] {
      return job_.spec.path + ": " + std::string(state_name(state_)) + " -> " + std::string(state_name(to)) + " (" +
             std::string(event_name(event)) + ")";
    });
  state_ = to;
}

bool FileTransfer::lock(bool wait) {
  if (partial_.lock(wait)) return true;
  apply(TransferEvent::lock_held_elsewhere);
  return false;
}

void FileTransfer::take_present(const download::Verification& v) {
  result_.outcome = download::Outcome::present;
  result_.sha256 = v.sha256;
  result_.git_oid = v.git_oid;
  result_.from_stamp = v.from_stamp;
  result_.warning = v.stamp_warning;
  partial_.close();
  apply(TransferEvent::found_in_place);
  observer_.on_finish(job_, result_);
}

void FileTransfer::start() {
  partial_.open(options_.connections, options_.min_split_size, observer_);
  busy_.assign(partial_.ranges().size(), false);
  result_.resumed_from = partial_.have();
  apply(partial_.split() ? TransferEvent::opened_split : TransferEvent::opened_stream);
  observer_.on_start(job_, partial_.have(), partial_.ranges().size());
  if (partial_.all_complete()) {  // all bytes already there (or an empty file)
    trace(job_, [&] { return "every byte is in the partial file already: no request"; });
    complete();
    return;
  }
  resolved_ = source_.resolve(job_);
  start_ranges();
}

void FileTransfer::more_connections() {
  if (state_ == TransferState::ranged) start_ranges();
}

void FileTransfer::start_ranges() {
  int limit = state_ == TransferState::ranged ? run_.connections_allowed() : 1;
  auto& ranges = partial_.ranges();
  for (std::size_t i = partial_.frontier(); i < ranges.size() && transfers_ < limit; ++i)
    if (!ranges[i].complete() && !busy_[i]) start_range(i);
}

void FileTransfer::start_range(std::size_t i) {
  RangeOwner& owner = *this;
  auto attempt = std::make_shared<RangeAttempt>(owner, i);
  ++transfers_;
  busy_[i] = true;
  run_.add_transfer(attempt->transfer(resolved_));
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
    apply(TransferEvent::ranges_left);
    trace(job_, [&] {
      return "one stream from byte " + std::to_string(partial_.have()) +
             " (the contiguous prefix kept, the rest fetched again)";
    });
    observer_.on_restart(job_, "the server does not honour range requests; going on as one stream from byte " +
                                   std::to_string(partial_.have()));
    start_ranges();
    return;
  }
  run_.slot_may_be_free();
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
    fail(TransferEvent::replaced, download::FileFailure::replaced,
         job_.partial_path.string() +
             ": replaced while it was being fetched and hashed; nothing published (a rerun fetches it again)");
    finish();
    return;
  }
  if (!c.ok()) {
    result_.outcome = download::Outcome::mismatch;
    result_.mismatch = c.mismatch;
    result_.reason = download::FileFailure::mismatch;
    result_.rejected = keep_aside(root, job_.partial_path, job_.rejected_prefix, c.sha256);
    result_.message = c.message + "; the downloaded bytes are kept at " + result_.rejected.string();
    trace(job_, [&] { return "rejected (" + c.message + "): kept aside at " + result_.rejected.string(); });
    apply(TransferEvent::rejected);
  } else {
    trace(job_, [&] { return "verified (sha256 " + c.sha256 + "): publishing at " + job_.final_path.string(); });
    root.publish(partial_.fd(), job_.partial_path, job_.final_path);
    remove_rejected(root, job_.rejected_prefix);  // the good copy is in place: earlier wrong ones go
    download::Verification v;
    v.state = download::FileState::ok;
    v.sha256 = c.sha256;
    v.git_oid = c.git_oid;
    result_.warning = download::record_verified(root, job_.final_path, v, job_.verified_stamp);
    result_.outcome = download::Outcome::downloaded;
    apply(TransferEvent::verified);
  }
  finish();
}

void FileTransfer::fail(TransferEvent event, const ReasonId& reason, const std::string& message) {
  bool first = state_ != TransferState::failing;
  apply(event);
  if (!first) return;
  trace(job_, [&] { return "failing: " + message; });
  result_.outcome = download::Outcome::failed;
  result_.reason = reason;
  result_.message = message;
}

void FileTransfer::finish() {
  partial_.close();
  if (state_ == TransferState::failing) apply(TransferEvent::drained);
  run_.finished(*this);
}

void FileTransfer::restart_stream() {
  partial_.start_over();
  busy_.assign(1, true);  // the transfer that got the whole file goes on with it
  result_.resumed_from = 0;
  apply(TransferEvent::stream_started_over);
  trace(job_, [&] { return "the server ignored the range request: the partial file starts over from byte 0"; });
  observer_.on_restart(job_, "the server ignored the range request; starting the file over");
}

void FileTransfer::reresolve(const http::Result& res) {
  ++reresolved_;
  redirected_.clear();
  resolved_ = source_.resolve(job_);
  std::string note = source_.expired_note(res);
  trace(job_, [&] {
    return "resolving again (" + std::to_string(reresolved_) + " of " + std::to_string(kMaxReresolve) + "): " + note;
  });
  observer_.on_retry(job_, note, 0);
}

void FileTransfer::flush_gathered() {
  gathering_ = false;
  partial_.flush_all();
}

RangeView FileTransfer::view(std::size_t range) {
  return RangeView{partial_.ranges()[range], partial_.missing(range), partial_.split(), job_.spec.size};
}

void FileTransfer::prepare_try(std::size_t range, int attempt, http::Request& req) {
  partial_.flush(range);  // a retry asks from the first byte not yet received
  req.url = redirected_.empty() ? resolved_ : redirected_;
  req.bearer_token = source_.bearer_token(resolved_, req.url);
  RangeBounds b = range_bounds(partial_.ranges()[range]);
  req.range_from = b.from;
  req.range_to = b.to;
  util::log::debug("download", [&] {
    return job_.spec.path + ": range " + std::to_string(range + 1) + "/" + std::to_string(partial_.ranges().size()) +
           " bytes=" + std::to_string(b.from) + "-" + (b.to ? std::to_string(*b.to) : std::string()) + " attempt " +
           std::to_string(attempt) + ": GET " + http::redact_url(req.url);
  });
}

void FileTransfer::answered(std::size_t range, HeadVerdict verdict, const std::string& url) {
  switch (verdict) {
    case HeadVerdict::ranged: {
      if (!http::same_origin(resolved_, url)) redirected_ = url;
      bool probing = state_ == TransferState::probing;
      apply(TransferEvent::range_honoured);
      if (probing) {
        trace(job_, [&] {
          return "the server honours ranges: up to " + std::to_string(run_.connections_allowed()) +
                 " connection(s) now, straight to " + http::redact_url(url);
        });
        start_ranges();  // the other connections, straight to where the resolve led
      }
      break;
    }
    case HeadVerdict::whole_file_split:
      // Never written at this range's offset. The file goes on as one stream
      // once its other transfers are done.
      trace(job_,
            [&] { return "range " + std::to_string(range + 1) + " answered with the whole file: leaving ranges"; });
      apply(TransferEvent::whole_file_answer);
      break;
    case HeadVerdict::whole_file_restart: restart_stream(); break;
    case HeadVerdict::whole_file:
    case HeadVerdict::wrong_range:
    case HeadVerdict::wrong_total: break;  // the attempt fails its transfer; on_done tells
  }
}

void FileTransfer::bytes(std::size_t range, const char* data, std::size_t n) {
  partial_.write(range, data, n);
  if (partial_.gathering(range) && !gathering_) {
    gathering_ = true;
    run_.gathering(*this);
  }
  result_.bytes_transferred += n;
  run_.received(n);
  partial_.save_sidecar_now_and_then(range);
  observer_.on_progress(job_, partial_.have());
}

void FileTransfer::retrying(const std::string& why, double delay_s) {
  trace(job_, [&] { return "retrying in " + std::to_string(delay_s) + " s: " + why; });
  observer_.on_retry(job_, why, delay_s);
}

void FileTransfer::ended(std::size_t range, const http::Result& res, const std::string& asked, bool stopped,
                         download::FileFailure abort_reason, bool wrote) {
  partial_.flush(range);
  --transfers_;
  busy_[range] = false;
  const ranges::Range& r = partial_.ranges()[range];
  AttemptEnd end;
  end.failure = res.failure;
  end.stopped = stopped;
  end.ok_status = res.ok();
  end.range_complete = r.complete();
  end.wrote = wrote;
  end.split = partial_.split();
  end.expired = res.failure == http::FailureKind::none && source_.expired(res, asked, resolved_) &&
                reresolved_ < kMaxReresolve;
  switch (judge_end(end)) {
    case EndVerdict::stopped:  // range full, or taken up by settle() (the file goes on as one stream)
    case EndVerdict::complete: break;
    case EndVerdict::failed:
      fail(TransferEvent::transfer_failed,
           res.failure == http::FailureKind::aborted ? abort_reason : download::FileFailure::network, res.message);
      break;
    case EndVerdict::expired:
      // Resolve the file again and carry on from where the range is. Ranges
      // refused with a URL already replaced do not count again.
      if (asked == redirected_ || asked == resolved_) reresolve(res);
      if (state_ != TransferState::failing) {
        start_range(range);
        return;
      }
      break;
    case EndVerdict::refused: {
      Error e = source_.refusal(job_, res.response);
      fail(TransferEvent::transfer_failed, e.reason(), e.what());
      break;
    }
    case EndVerdict::short_body:
      fail(TransferEvent::transfer_failed, download::FileFailure::network,
           "the transfer ended after " + std::to_string(partial_.have()) + " of " + std::to_string(job_.spec.size) +
               " bytes (kept for the next run)");
      break;
    case EndVerdict::range_again:
      // Started again by settle() from where it got to.
      trace(job_, [&] {
        return "range " + std::to_string(range + 1) + " ended early at byte " + std::to_string(r.next()) +
               ": asked for again from there";
      });
      break;
  }
  settle();
}

// ---- RangeAttempt -----------------------------------------------------------------

http::Transfer RangeAttempt::transfer(const std::string& url) {
  http::Transfer t;
  t.request.url = url;
  auto self = shared_from_this();
  t.before_attempt = [self](http::Request& req) { self->before_try(req); };
  t.on_head = [self](const http::Hop& hop) { self->on_head(hop); };
  t.on_body = [self](const char* data, std::size_t n) { self->on_body(data, n); };
  t.on_retry = [self](const std::string& why, double delay) { self->owner_.retrying(why, delay); };
  t.on_done = [self](http::Result& res) { self->on_done(res); };
  return t;
}

void RangeAttempt::before_try(http::Request& req) {
  owner_.prepare_try(range_, ++attempt_, req);
  url_ = req.url;
}

void RangeAttempt::on_head(const http::Hop& hop) {
  RangeView v = owner_.view(range_);
  std::uint64_t next = v.range.next(), size = v.size;  // answered() may start the file over
  std::optional<http::ContentRange> cr;
  if (hop.status == 206) cr = http::parse_content_range(hop.headers.get("content-range").value_or(""));
  HeadVerdict verdict = judge_head(hop.status, cr, next, size, v.split, v.range.done > 0);
  owner_.answered(range_, verdict, hop.url);
  switch (verdict) {
    case HeadVerdict::wrong_range:
      abort_reason_ = download::FileFailure::server_error;
      throw http::Abort("the server answered the range request from byte " + std::to_string(next) +
                        " with another range");
    case HeadVerdict::wrong_total:
      abort_reason_ = download::FileFailure::wrong_size;
      throw http::Abort("the server has " + std::to_string(*cr->total) + " bytes, the manifest says " +
                        std::to_string(size));
    case HeadVerdict::whole_file_split:
      stopped_ = true;
      throw http::Abort("the server answered a range request with the whole file");
    case HeadVerdict::ranged:
    case HeadVerdict::whole_file_restart:
    case HeadVerdict::whole_file: break;
  }
}

void RangeAttempt::on_body(const char* data, std::size_t n) {
  RangeView v = owner_.view(range_);
  BodyVerdict verdict = judge_body(n, v.missing, v.split);
  if (verdict.too_long) {
    abort_reason_ = download::FileFailure::wrong_size;
    throw http::Abort("the server sent more than the manifest's " + std::to_string(v.size) + " bytes");
  }
  owner_.bytes(range_, data, verdict.take);
  if (verdict.take > 0) wrote_ = true;
  if (verdict.stop) {
    stopped_ = true;
    throw http::Abort("range complete");
  }
}

void RangeAttempt::on_done(http::Result& res) { owner_.ended(range_, res, url_, stopped_, abort_reason_, wrote_); }

// ---- Run --------------------------------------------------------------------------

Run::Run(const download::Options& options, Source& source, download::Observer& observer, const download::JobList& jobs)
    : options_(options),
      source_(source),
      observer_(observer),
      jobs_(jobs),
      results_(jobs.count),
      files_(jobs.count),
      ramp_(options.connections),
      session_(options.http) {
  session_.on_round_end([this] {
    flush_gathered();
    release_finished();
  });
}

std::unique_ptr<FileTransfer> Run::make_file(std::size_t i) {
  Scheduler& scheduler = *this;
  return std::make_unique<FileTransfer>(scheduler, options_, source_, observer_, jobs_.make(i), results_[i]);
}

void Run::release_finished() {
  for (std::size_t i : finished_) files_[i].reset();
  finished_.clear();
}

void Run::received(std::size_t n) {
  received_ += n;
  if (ramp_.settled() || !ramp_.observe(received_, std::chrono::steady_clock::now())) return;
  for (auto& f : files_)
    if (f) f->more_connections();
}

void Run::flush_gathered() {
  for (FileTransfer* f : gathering_) f->flush_gathered();
  gathering_.clear();
}

std::vector<download::JobResult> Run::run() {
  // Content already in place is verified (or vouched for by its stamp), not
  // fetched again. A wrong copy is moved aside only under the blob's lock
  // (launch_next): another run may be publishing the right one meanwhile.
  // Each file's job is made here for the look and dropped; a file to fetch gets it again when it starts.
  for (std::size_t i = 0; i < jobs_.count; ++i) {
    std::unique_ptr<FileTransfer> f = make_file(i);
    const download::Job& job = f->job();
    results_[i].path = job.spec.path;
    results_[i].source = options_.source;
    download::Verification v = download::verify_file_stamped(f->root(), job.final_path, job.spec, job.verified_stamp);
    if (v.state == download::FileState::ok) {
      f->take_present(v);
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
    if (!files_[i]) files_[i] = make_file(i);  // kept while another process holds its lock
    FileTransfer& f = *files_[i];
    const download::Job& job = f.job();
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
        files_[i].reset();  // not the file whose call this may be inside: that one is in flight
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

void Run::finished(FileTransfer& f) {
  --in_flight_;
  observer_.on_finish(f.job(), f.result());
  finished_.push_back(static_cast<std::size_t>(&f.result() - results_.data()));
}

}  // namespace provkit::download

namespace provkit::download {

std::vector<JobResult> Downloader::run(const JobList& jobs, Observer& observer) {
  return download::Run(options_, source_, observer, jobs).run();
}

std::vector<JobResult> Downloader::run(const std::vector<Job>& jobs, Observer& observer) {
  return run(JobList{jobs.size(), [&jobs](std::size_t i) { return jobs[i]; }}, observer);
}

}  // namespace provkit::download
