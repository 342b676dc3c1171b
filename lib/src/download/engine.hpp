#pragma once
// The download engine behind download::Downloader, as three named parts that
// know each other only through narrow interfaces (no friends):
// - Run: the scheduler over files and connections (which file starts when,
//   the blob locks of other processes, one http::Session for all, the ramp);
//   a FileTransfer sees it as a Scheduler;
// - FileTransfer: one file, from its partial file to its final path; it owns
//   its state (TransferState, transfer_state.hpp) and changes it only through
//   the checked transition table;
// - RangeAttempt: one HTTP transfer of one byte range of a file; it judges
//   the answers (transfer_state.hpp) and reports what they say to its
//   RangeOwner, never touching the file's state or the run.
// Where files come from and what the answers mean is the Source's
// (download/source.hpp); the bytes' bookkeeping is PartialFile's.
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "partial.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/download/source.hpp"
#include "provkit/http/http.hpp"
#include "ramp.hpp"
#include "transfer_state.hpp"

namespace provkit::download {

class FileTransfer;

// What a file asks of the run it is part of.
class Scheduler {
 public:
  // Carries `t` on the run's one session.
  virtual void add_transfer(http::Transfer t) = 0;
  // How many connections a file in ranges may use now (the ramp's count).
  virtual int connections_allowed() const = 0;
  // `n` body bytes arrived (the ramp measures the run's throughput).
  virtual void received(std::size_t n) = 0;
  // `f` holds received bytes to write at the end of this round of reads.
  virtual void gathering(FileTransfer& f) = 0;
  // A transfer of a file ended: slots may have come free for queued files.
  virtual void slot_may_be_free() = 0;
  // `f` is done or failed; its result is final.
  virtual void finished(FileTransfer& f) = 0;

 protected:
  ~Scheduler() = default;
};

// What a RangeAttempt reports to the file whose range it fetches, and the
// little it asks of it. Calls come from the session's callbacks.
struct RangeView {
  const ranges::Range& range;
  std::uint64_t missing;  // what the range still lacks, bytes gathered but not written counted
  bool split;
  std::uint64_t size;  // the file's
};
class RangeOwner {
 public:
  virtual RangeView view(std::size_t range) = 0;
  // Before each try (the first and every retry): where to ask, with which token.
  // Bytes gathered for the range are written first, so that a retry asks from
  // the first byte not yet received.
  virtual void prepare_try(std::size_t range, int attempt, http::Request& req) = 0;
  // The final answer's head, judged (a verdict that fails the transfer is the attempt's to raise).
  virtual void answered(std::size_t range, HeadVerdict verdict, const std::string& url) = 0;
  // Bytes of the range, `n` at most what it lacks.
  virtual void bytes(std::size_t range, const char* data, std::size_t n) = 0;
  virtual void retrying(const std::string& why, double delay_s) = 0;
  // The transfer ended (after its retries); `asked`: the URL its last try asked.
  virtual void ended(std::size_t range, const http::Result& res, const std::string& asked, bool stopped,
                     FileFailure abort_reason, bool wrote) = 0;

 protected:
  ~RangeOwner() = default;
};

class FileTransfer : private RangeOwner {
 public:
  FileTransfer(Scheduler& run, const download::Options& options, Source& source, download::Observer& observer,
               download::Job job, download::JobResult& result);
  FileTransfer(const FileTransfer&) = delete;
  FileTransfer& operator=(const FileTransfer&) = delete;

  TransferState state() const { return state_; }
  const download::Job& job() const { return job_; }
  const util::Root& root() const { return partial_.root(); }
  const download::JobResult& result() const { return result_; }
  // Takes the blob lock; false (and locked_elsewhere) when another process holds it.
  bool lock(bool wait);
  // The file is in place already: done, nothing fetched.
  void take_present(const download::Verification& v);
  // Opens the partial file and starts the first transfer (or completes the
  // file at once when every byte is already there).
  void start();
  // The ramp allows more connections: a file in ranges starts transfers for them.
  void more_connections();
  // Writes the bytes its transfers gathered (at the end of each round of reads).
  void flush_gathered();

 private:
  // The one place the state changes: through the table, traced.
  void apply(TransferEvent event);

  // RangeOwner
  RangeView view(std::size_t range) override;
  void prepare_try(std::size_t range, int attempt, http::Request& req) override;
  void answered(std::size_t range, HeadVerdict verdict, const std::string& url) override;
  void bytes(std::size_t range, const char* data, std::size_t n) override;
  void retrying(const std::string& why, double delay_s) override;
  void ended(std::size_t range, const http::Result& res, const std::string& asked, bool stopped,
             FileFailure abort_reason, bool wrote) override;

  // Starts transfers for incomplete ranges, lowest first (the hash follows
  // the contiguous prefix), up to the state's connection count.
  void start_ranges();
  void start_range(std::size_t i);
  // After a transfer ends: more ranges, or the file's end.
  void settle();
  // Every byte is there: verify, then rename into place or keep aside.
  void complete();
  // The first failure is the one to tell.
  void fail(TransferEvent event, const ReasonId& reason, const std::string& message);
  void finish();
  // A range was answered from byte 0 with the whole file: the file starts over.
  void restart_stream();
  // Asks the source again for a URL after the one the resolve led to was refused.
  void reresolve(const http::Result& res);

  Scheduler& run_;
  const download::Options& options_;
  Source& source_;
  download::Observer& observer_;
  const download::Job job_;  // its own: made when the file starts, dropped when it is done
  download::JobResult& result_;
  PartialFile partial_;
  TransferState state_ = TransferState::queued;
  std::vector<bool> busy_;  // a transfer works on ranges[i]
  int transfers_ = 0;       // in flight
  std::string resolved_;    // what the source resolved the file to
  std::string redirected_;  // where the resolve URL led (the CDN); later ranges go there directly
  int reresolved_ = 0;
  bool gathering_ = false;  // handed to Scheduler::gathering, not yet flushed
};

class RangeAttempt : public std::enable_shared_from_this<RangeAttempt> {
 public:
  RangeAttempt(RangeOwner& owner, std::size_t range) : owner_(owner), range_(range) {}
  // The HTTP transfer whose callbacks are this attempt's (it keeps the attempt alive).
  http::Transfer transfer(const std::string& url);

 private:
  void before_try(http::Request& req);
  void on_head(const http::Hop& hop);
  void on_body(const char* data, std::size_t n);
  void on_done(http::Result& res);

  RangeOwner& owner_;
  std::size_t range_;
  int attempt_ = 0;
  std::string url_;                                  // asked for (the resolved URL or where it led)
  FileFailure abort_reason_ = FileFailure::network;  // for an http::Abort thrown by on_head/on_body
  bool wrote_ = false;
  bool stopped_ = false;  // aborted on purpose (range full, or whole file refused): no failure
};

class Run : private Scheduler {
 public:
  Run(const download::Options& options, Source& source, download::Observer& observer, const download::JobList& jobs);
  // Results in the order of the jobs.
  std::vector<download::JobResult> run();

 private:
  // Scheduler
  void add_transfer(http::Transfer t) override { session_.add(std::move(t)); }
  int connections_allowed() const override { return ramp_.allowed(); }
  void received(std::size_t n) override;
  void gathering(FileTransfer& f) override { gathering_.push_back(&f); }
  void slot_may_be_free() override { launch_next(); }
  void finished(FileTransfer& f) override;

  // Starts queued files while slots are free.
  void launch_next();
  // After each round of reads: the gathered bytes of every file written.
  void flush_gathered();
  // The file of job i, its job made now (JobList::make).
  std::unique_ptr<FileTransfer> make_file(std::size_t i);
  // After each round: the files done since the last one are dropped (their jobs and buffers), never from
  // inside one of their own calls.
  void release_finished();

  const download::Options& options_;
  Source& source_;
  download::Observer& observer_;
  const download::JobList& jobs_;
  std::vector<download::JobResult> results_;
  // By job index: only the files started and not yet released (a run of 300,000 files holds a few).
  std::vector<std::unique_ptr<FileTransfer>> files_;
  std::vector<std::size_t> finished_;  // done since the last round's end
  std::deque<std::size_t> queue_;
  std::deque<std::size_t> locked_elsewhere_;
  bool wait_for_locks_ = false;
  int in_flight_ = 0;
  std::vector<FileTransfer*> gathering_;  // files holding received bytes not yet written
  ConnectionRamp ramp_;
  std::uint64_t received_ = 0;  // body bytes of the whole run
  http::Session session_;
};

}  // namespace provkit::download
