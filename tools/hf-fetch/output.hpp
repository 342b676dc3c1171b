#pragma once
// How hf-fetch speaks: one plain line per event (not a terminal), a live
// progress display (terminal), or JSON lines (--json). --quiet keeps only
// problems. Problems go to stderr in the text modes; JSON goes to stdout.
#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "provkit/error.hpp"
#include "provkit/fetch.hpp"

namespace hffetch {

class Reporter : public provkit::fetch::Observer {
 public:
  enum class Mode { plain, tty, json };
  Reporter(Mode mode, bool quiet) : mode_(mode), quiet_(quiet) {}

  // One event: STATUS path: detail. `fields` are added to the JSON event.
  void event(const std::string& kind, const std::string& status, const std::string& path, const std::string& detail,
             bool problem, nlohmann::json fields = nlohmann::json::object());
  // A sentence for people (not shown with --json or --quiet).
  void note(const std::string& text);
  // A fatal error: the sentence on stderr, or an "error" JSON event.
  void error(const provkit::Error& e);
  // The last word: JSON summary object, or `text` on stdout.
  void summary(nlohmann::json fields, const std::string& text, bool problem);

  void begin_downloads(std::uint64_t total_bytes, std::size_t files);

  void on_start(const provkit::fetch::Job& job, std::uint64_t resume_from, std::size_t ranges) override;
  void on_progress(const provkit::fetch::Job& job, std::uint64_t have) override;
  void on_retry(const provkit::fetch::Job& job, const std::string& why, double delay_s) override;
  void on_restart(const provkit::fetch::Job& job, const std::string& why) override;
  void on_finish(const provkit::fetch::Job& job, const provkit::fetch::JobResult& r) override;

 private:
  void print(const std::string& text, bool problem);
  void draw_progress(bool force);
  void clear_progress();

  Mode mode_;
  bool quiet_;
  // Progress state (terminal mode).
  std::uint64_t total_bytes_ = 0, done_bytes_ = 0, transferred_ = 0;
  std::size_t files_ = 0, files_done_ = 0;
  std::map<std::string, std::uint64_t> current_;  // path -> bytes so far
  std::map<std::string, std::uint64_t> sizes_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  bool progress_shown_ = false;
};

std::string human_bytes(std::uint64_t n);

}  // namespace hffetch
