#pragma once
// How hf-fetch speaks. Output words the library's events once (a STATUS, a
// path, a detail and the JSON fields); three renderers (output.cpp) show
// them: plain lines (not a terminal), lines above a live progress display
// (terminal), or JSON lines (--json). --quiet keeps only problems. Problems
// go to stderr in the text modes; JSON goes to stdout.
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "provkit/cli/output.hpp"
#include "provkit/download/progress.hpp"

#include "provkit/error.hpp"
#include "provkit/hub/fetch.hpp"
#include "provkit/util/size.hpp"

namespace hffetch {

namespace download = provkit::download;
namespace hub = provkit::hub;

class Output : public hub::FetchObserver {
 public:
  enum class Mode { plain, tty, json };
  static std::unique_ptr<Output> make(Mode mode, bool quiet);
  explicit Output(bool quiet) : quiet_(quiet) {}

  // One event: STATUS path: detail. `fields` are added to the JSON event.
  virtual void event(const std::string& kind, const std::string& status, const std::string& path,
                     const std::string& detail, bool problem, nlohmann::json fields = nlohmann::json::object()) = 0;
  // A sentence for people (not shown with --json or --quiet).
  virtual void note(const std::string& text) = 0;
  // A fatal error: the sentence on stderr, or the summary (its exit code, its reason, the sentence).
  virtual void error(const provkit::Error& e) = 0;
  // The last word: the JSON summary (`exit_code`, `reason` when it is not 0, `fields`), or `text` on stdout.
  // Names from outside in `text` are escaped by the caller (util::printable); the text's own newlines stay.
  virtual void summary(int exit_code, std::optional<provkit::ReasonId> reason, nlohmann::json fields,
                       const std::string& text, bool problem) = 0;
  virtual void begin_downloads(std::uint64_t total_bytes, std::size_t files);

  // --progress lines: one line on stderr with the run's numbers (called every
  // --progress-interval seconds from another thread; nothing before the
  // downloads start).
  void progress_line();
  // A command stopped by a signal: its summary (a fetch's with the numbers so far), written without ever
  // waiting on the reader: the output lock is waited for briefly (a writer stuck on a pipe nobody drains
  // holds it), the summary is written straight to the descriptor within a bounded time, and whatever does
  // not fit is lost. The lock, when it was taken, is kept: no other line follows before the process exits.
  enum class Stopped { fetch, mirror_export };
  void interrupted(const std::string& signal_name, int exit_code, Stopped what);

  void on_start(const download::Job& job, std::uint64_t resume_from, std::size_t ranges) override;
  void on_progress(const download::Job& job, std::uint64_t have) override;
  void on_retry(const download::Job& job, const std::string& why, double delay_s) override;
  void on_restart(const download::Job& job, const std::string& why) override;
  void on_finish(const download::Job& job, const download::JobResult& r) override;
  void on_verified(const hub::FileCheck& c) override;
  void on_checked_in_place(const hub::FileCheck& c, const provkit::hub::hfcache::Layout& layout) override;
  void on_assembled(const hub::Assembly& a) override;
  void on_dropped(const hub::DroppedPart& d) override;
  void on_source_lacks(const std::string& url, const hub::UpstreamCheck& c) override;
  void on_upstream(const hub::UpstreamCheck& c) override;
  void on_plan(const hub::Manifest& m, const hub::hfcache::Layout& layout, const hub::DownloadPlan& plan) override;
  void on_space_plan(const hub::SpacePlan& plan, bool dry_run) override;
  void on_source(const std::string& url, bool mirror) override;
  void on_source_failed(const std::string& url, const std::string& why) override;
  void on_sources_unreachable(const std::vector<hub::SourceFailure>& failed) override;

 protected:
  // What a started file shows (FETCH or RESUME); the tally is kept by on_start.
  virtual void start_event(const download::Job& job, std::uint64_t resume_from, std::size_t ranges);
  // The bytes summary() would write, as (descriptor, text) pieces in order, for interrupted() to write itself.
  virtual std::vector<std::pair<int, std::string>> rendered_summary(int exit_code,
                                                                    std::optional<provkit::ReasonId> reason,
                                                                    nlohmann::json fields, const std::string& text,
                                                                    bool problem) = 0;
  // Taken by every write: the engine's thread, the progress-line thread and a
  // signal's summary write whole lines, never into each other.
  std::recursive_timed_mutex mu_;
  download::ProgressTally tally_;        // under mu_
  bool downloading_ = false;             // begin_downloads was called
  bool from_mirror_ = false;             // the source files are asked of now is a mirror
  std::optional<std::size_t> to_fetch_;  // files the space plan found not in place (fetch or resume)
  bool quiet_;
};

// SIGTERM, SIGINT and SIGHUP, taken by one thread for the whole command: the temporaries the run is writing
// are removed (util::remove_temporaries_now), the summary is written (Output::interrupted, never waiting on
// the reader) and the process exits 128 + the signal (143, 130, 129); what a fetch keeps are its partials and
// their range sidecars, which the next run resumes. The same thread prints a progress line every
// `interval_s` seconds (--progress lines; 0: none), skipped while stderr cannot take it.
class SignalWatch {
 public:
  SignalWatch(Output& out, Output::Stopped what, long interval_s);
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;
  ~SignalWatch();

 private:
  void watch();
  Output& out_;
  Output::Stopped what_;
  long interval_s_;
  sigset_t set_{}, old_{};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One size format for every tool's messages.
inline std::string human_bytes(std::uint64_t n) { return provkit::util::format_size(n); }

}  // namespace hffetch
