#pragma once
// The download engine behind download::Downloader, as three named parts:
// - Run: the scheduler over files and connections (which file starts when,
//   the blob locks of other processes, one http::Session for all);
// - FileTransfer: one file, from its partial file to its final path, with
//   its state written out (TransferState);
// - RangeAttempt: one HTTP transfer of one byte range of a file.
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
#include "provkit/download/ramp.hpp"
#include "provkit/download/source.hpp"
#include "provkit/http/http.hpp"

namespace provkit::download {

enum class TransferState {
  queued,            // waiting for a free slot (Options::max_parallel)
  locked_elsewhere,  // another process holds its blob lock: taken up once nothing of ours is in flight
  probing,           // split: one range out, until a 206 shows that the server honours ranges
  ranged,            // split: ranges over as many connections as the run's ramp allows (Options::connections at most)
  streaming,         // one stream (a small file, or a split one that left ranges)
  leaving_ranges,    // a range was answered with the whole file: the others end, then one stream
  failing,           // failed: the transfers still in flight end, then `failed`
  done,              // in place (present or downloaded), or kept aside (mismatch): see its result
  failed,
};
std::string_view state_name(TransferState s);

class Run;

class FileTransfer {
 public:
  FileTransfer(Run& run, const download::Job& job, download::JobResult& result);
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

 private:
  friend class RangeAttempt;
  friend class Run;

  // Starts transfers for incomplete ranges, lowest first (the hash follows
  // the contiguous prefix), up to the state's connection count.
  void start_ranges();
  void start_range(std::size_t i);
  // After a transfer ends: more ranges, or the file's end.
  void settle();
  // Every byte is there: verify, then rename into place or keep aside.
  void complete();
  // The first failure is the one to tell.
  void fail(ExitCode code, const std::string& message);
  void finish();
  // A range was answered from byte 0 with the whole file: the file starts over.
  void restart_stream();
  // Asks the source again for a URL after the one the resolve led to was refused.
  void reresolve(const http::Result& res);
  // Writes the bytes its transfers gathered (at the end of each round of reads).
  void flush_gathered();

  Run& run_;
  const download::Job& job_;
  download::JobResult& result_;
  PartialFile partial_;
  TransferState state_ = TransferState::queued;
  std::vector<bool> busy_;  // a transfer works on ranges[i]
  int transfers_ = 0;       // in flight
  std::string resolved_;    // what the source resolved the file to
  std::string redirected_;  // where the resolve URL led (the CDN); later ranges go there directly
  int reresolved_ = 0;
  bool gathering_ = false;  // listed in Run::gathering_
};

class RangeAttempt : public std::enable_shared_from_this<RangeAttempt> {
 public:
  RangeAttempt(FileTransfer& file, std::size_t range) : file_(file), range_(range) {}
  // The HTTP transfer whose callbacks are this attempt's (it keeps the attempt alive).
  http::Transfer transfer();

 private:
  // Each try starts at the URL a range already led to, else the resolved URL
  // (a fresh redirect), always with a bounded range, also from byte 0: CDNs
  // have been seen refusing range-less GETs of very large files.
  void before_try(http::Request& req);
  void on_head(const http::Hop& hop);
  void on_body(const char* data, std::size_t n);
  void on_done(http::Result& res);

  FileTransfer& file_;
  std::size_t range_;
  std::string url_;                          // asked for (the resolved URL or where it led)
  ExitCode abort_code_ = ExitCode::network;  // for an http::Abort thrown by on_head/on_body
  std::uint64_t written_ = 0;
  bool stopped_ = false;  // aborted on purpose (range full, or whole file refused): no failure
};

class Run {
 public:
  Run(const download::Options& options, Source& source, download::Observer& observer,
      const std::vector<download::Job>& jobs);
  // Results in the order of the jobs.
  std::vector<download::JobResult> run();

 private:
  friend class FileTransfer;
  friend class RangeAttempt;

  // Starts queued files while slots are free.
  void launch_next();
  void file_finished(FileTransfer& f);
  // After each round of reads: the gathered bytes of every file written.
  void flush_gathered();
  // n more body bytes arrived: the ramp measures, and files in ranges get the connections it allows.
  void received(std::size_t n);

  const download::Options& options_;
  Source& source_;
  download::Observer& observer_;
  const std::vector<download::Job>& jobs_;
  std::vector<download::JobResult> results_;
  std::vector<std::unique_ptr<FileTransfer>> files_;  // by job index
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
