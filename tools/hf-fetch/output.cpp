#include "output.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "provkit/download/progress.hpp"
#include "provkit/http/url.hpp"
#include "provkit/util/interrupt.hpp"
#include "provkit/util/text.hpp"

namespace hffetch {

using download::FileState;
using download::Job;
using download::JobResult;
using download::Outcome;

namespace {

// What is wrong with a file on disk, for its line (empty when OK or missing).
std::string mismatch_detail(const download::FileSpec& spec, const download::Verification& v) {
  switch (v.state) {
    case FileState::size_mismatch:
      return std::to_string(v.size) + " bytes on disk, " + std::to_string(spec.size) + " in the manifest";
    case FileState::sha256_mismatch: return "expected " + spec.sha256.value_or("") + ", got " + v.sha256;
    case FileState::git_oid_mismatch: return "expected git oid " + spec.git_oid.value_or("") + ", got " + v.git_oid;
    default: return "";
  }
}

std::string in_place_detail(bool from_stamp) {
  return from_stamp ? "already in place, unchanged since it was verified" : "already in place and verified";
}

class PlainOutput : public Output {
 public:
  using Output::Output;
  void note(const std::string& text) override {
    if (!quiet_) print(provkit::util::printable(text), false);
  }
  void error(const provkit::Error& e) override {
    std::lock_guard lock(mu_);
    std::cerr << provkit::cli::sentence("hf-fetch", e.what()) << std::flush;
  }
  void summary(int, std::optional<provkit::ReasonId>, nlohmann::json, const std::string& text, bool problem) override {
    if (!quiet_ || problem) print(text, problem);
  }
  // The path and the detail quote the Hub, the manifest and the disk: one line each, whatever they hold.
  void event(const std::string&, const std::string& status, const std::string& path, const std::string& detail,
             bool problem, nlohmann::json) override {
    if (quiet_ && !problem) return;
    print(status + (path.empty() ? "" : " " + provkit::util::printable(path)) +
              (detail.empty() ? "" : ": " + provkit::util::printable(detail)),
          problem);
  }
  virtual void print(const std::string& text, bool problem) {
    std::lock_guard lock(mu_);
    (problem ? std::cerr : std::cout) << text << std::endl;
  }

 protected:
  std::vector<std::pair<int, std::string>> rendered_summary(int, std::optional<provkit::ReasonId>, nlohmann::json,
                                                            const std::string& text, bool problem) override {
    if (quiet_ && !problem) return {};
    return {{problem ? STDERR_FILENO : STDOUT_FILENO, text + "\n"}};
  }
};

// Plain lines above one progress line, redrawn at most every 100 ms; no FETCH lines.
class TerminalOutput : public PlainOutput {
 public:
  using PlainOutput::PlainOutput;
  void error(const provkit::Error& e) override {
    std::lock_guard lock(mu_);
    clear_progress();
    PlainOutput::error(e);
  }
  void summary(int exit_code, std::optional<provkit::ReasonId> reason, nlohmann::json fields, const std::string& text,
               bool problem) override {
    std::lock_guard lock(mu_);
    clear_progress();
    finished_ = true;
    PlainOutput::summary(exit_code, reason, std::move(fields), text, problem);
  }
  void on_progress(const Job& job, std::uint64_t have) override {
    std::lock_guard lock(mu_);
    Output::on_progress(job, have);
    draw_progress(false);
  }

 protected:
  std::vector<std::pair<int, std::string>> rendered_summary(int exit_code, std::optional<provkit::ReasonId> reason,
                                                            nlohmann::json fields, const std::string& text,
                                                            bool problem) override {
    auto pieces = PlainOutput::rendered_summary(exit_code, reason, std::move(fields), text, problem);
    if (progress_shown_) pieces.insert(pieces.begin(), std::make_pair(STDOUT_FILENO, std::string("\r\033[K")));
    finished_ = true;
    return pieces;
  }
  void start_event(const Job& job, std::uint64_t resume_from, std::size_t ranges) override {
    std::lock_guard lock(mu_);
    if (resume_from > 0) Output::start_event(job, resume_from, ranges);  // RESUME; FETCH is the progress line
    draw_progress(true);
  }

 private:
  void print(const std::string& text, bool problem) override {
    std::lock_guard lock(mu_);
    clear_progress();
    PlainOutput::print(text, problem);
    draw_progress(true);
  }
  void clear_progress() {
    if (!progress_shown_) return;
    std::cout << "\r\033[K" << std::flush;
    progress_shown_ = false;
  }
  void draw_progress(bool force);

  std::chrono::steady_clock::time_point last_draw_{};
  bool progress_shown_ = false;
  bool finished_ = false;  // after the summary: no more redraws
};

void TerminalOutput::draw_progress(bool force) {
  if (finished_ || quiet_ || !tally_.has_total()) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  auto v = tally_.view(now);
  if (!v) return clear_progress();
  char eta[32] = "--:--";
  if (v->seconds_left) std::snprintf(eta, sizeof eta, "%ld:%02ld", *v->seconds_left / 60, *v->seconds_left % 60);
  std::string path = provkit::util::printable(v->path);
  std::string name = path.size() > 40 ? "..." + path.substr(path.size() - 37) : path;
  std::cout << "\r\033[K"
            << "[" << v->file_number << "/" << v->files << "] " << name << " " << human_bytes(v->have) << "/"
            << human_bytes(v->size) << " | total " << human_bytes(v->done) << "/" << human_bytes(v->total) << " "
            << human_bytes(static_cast<std::uint64_t>(v->rate)) << "/s ETA " << eta << std::flush;
  progress_shown_ = true;
}

// docs/json.md: events, then one summary (cli::JsonLines).
class JsonOutput : public Output {
 public:
  using Output::Output;
  void note(const std::string&) override {}
  void error(const provkit::Error& e) override {
    std::lock_guard lock(mu_);
    lines_.failure(e);
  }
  void summary(int exit_code, std::optional<provkit::ReasonId> reason, nlohmann::json fields, const std::string&,
               bool) override {
    std::lock_guard lock(mu_);
    lines_.summary(exit_code, reason, std::move(fields));
  }
  void event(const std::string& kind, const std::string& status, const std::string& path, const std::string& detail,
             bool problem, nlohmann::json fields) override {
    if (quiet_ && !problem) return;
    std::lock_guard lock(mu_);
    nlohmann::json ev = {{"status", status}, {"path", path}};
    if (!detail.empty()) ev["detail"] = detail;
    for (auto& [k, v] : fields.items()) ev[k] = v;
    lines_.event(kind, ev);
  }

 protected:
  std::vector<std::pair<int, std::string>> rendered_summary(int exit_code, std::optional<provkit::ReasonId> reason,
                                                            nlohmann::json fields, const std::string&, bool) override {
    if (lines_.summarized()) return {};
    std::ostringstream line;
    provkit::cli::JsonLines("hf-fetch", &line).summary(exit_code, reason, std::move(fields));
    return {{STDOUT_FILENO, line.str()}};
  }

 private:
  provkit::cli::JsonLines lines_{"hf-fetch"};
};

}  // namespace

std::unique_ptr<Output> Output::make(Mode mode, bool quiet) {
  if (mode == Mode::json) return std::make_unique<JsonOutput>(quiet);
  if (mode == Mode::tty) return std::make_unique<TerminalOutput>(quiet);
  return std::make_unique<PlainOutput>(quiet);
}

// ---- the words for the library's events, one place for every renderer ----

void Output::begin_downloads(std::uint64_t total_bytes, std::size_t files) {
  std::lock_guard lock(mu_);
  tally_.begin(total_bytes, files, std::chrono::steady_clock::now());
  downloading_ = true;
}

void Output::on_start(const Job& job, std::uint64_t resume_from, std::size_t ranges) {
  {
    std::lock_guard lock(mu_);
    tally_.start(job.spec.path, job.spec.size, resume_from);
  }
  start_event(job, resume_from, ranges);
}

void Output::on_progress(const Job& job, std::uint64_t have) {
  std::lock_guard lock(mu_);
  tally_.progress(job.spec.path, have);
}

namespace {
std::string eta_text(const download::ProgressTally::View& v) {
  char eta[32] = "--:--";
  if (v.seconds_left) std::snprintf(eta, sizeof eta, "%ld:%02ld", *v.seconds_left / 60, *v.seconds_left % 60);
  return eta;
}
}  // namespace

void Output::progress_line() {
  // Never waits: a writer stuck on a full pipe holds the lock, and a stderr nobody drains takes no line.
  std::unique_lock lock(mu_, std::try_to_lock);
  pollfd err{STDERR_FILENO, POLLOUT, 0};
  if (!lock || !downloading_ || ::poll(&err, 1, 0) != 1 || !(err.revents & POLLOUT)) return;
  auto v = tally_.totals(std::chrono::steady_clock::now());
  std::cerr << "hf-fetch: " << v.files_done << "/" << v.files << " files, " << human_bytes(v.done) << " of "
            << human_bytes(v.total) << ", " << human_bytes(static_cast<std::uint64_t>(v.rate)) << "/s, ETA "
            << eta_text(v) << std::endl;
}

void Output::interrupted(const std::string& signal_name, int exit_code, Stopped what) {
  using namespace std::chrono_literals;
  const auto deadline = std::chrono::steady_clock::now() + 1500ms;
  // Kept when taken: the process exits with it held. Not taken: a writer is stuck holding it, and so is
  // every thread that changes the tally, which is read as it stands.
  bool locked = mu_.try_lock_for(250ms);
  nlohmann::json fields;
  std::string text;
  if (what == Stopped::fetch) {
    auto v = tally_.totals(std::chrono::steady_clock::now());
    text = "interrupted by " + signal_name + ": " + std::to_string(v.files_done) + " of " + std::to_string(v.files) +
           " files done, " + human_bytes(tally_.transferred()) +
           " transferred; partial files are kept and the next run resumes them";
    fields = {{"mode", "fetch"},
              {"signal", signal_name},
              {"files", v.files},
              {"downloaded", v.files_done},
              {"bytes_transferred", tally_.transferred()}};
  } else {
    text = "interrupted by " + signal_name +
           ": the export was not finished and its unfinished tree was removed; an earlier export is served as it was";
    fields = {{"mode", "mirror-export"}, {"signal", signal_name}};
  }
  auto pieces = rendered_summary(exit_code, provkit::Reason::interrupted, std::move(fields), text, true);
  for (auto& [fd, bytes] : pieces) {
    if (!locked && fd == STDOUT_FILENO) bytes.insert(0, "\n");  // after a line the stuck writer may have cut short
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!provkit::util::write_within(fd, bytes, std::max(left, 0ms))) break;
  }
}

SignalWatch::SignalWatch(Output& out, Output::Stopped what, long interval_s)
    : out_(out), what_(what), interval_s_(interval_s) {
  sigemptyset(&set_);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set_, sig);
  // Before any other thread starts: they inherit the mask, so only this one takes the signals.
  pthread_sigmask(SIG_BLOCK, &set_, &old_);
  thread_ = std::thread([this] { watch(); });
}

SignalWatch::~SignalWatch() {
  stop_ = true;
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

void SignalWatch::watch() {
  auto last_line = std::chrono::steady_clock::now();
  while (!stop_) {
    timespec wait{0, 200'000'000};
    int sig = sigtimedwait(&set_, nullptr, &wait);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
      provkit::util::remove_temporaries_now(std::chrono::milliseconds(500));
      out_.interrupted(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP", 128 + sig, what_);
      _exit(128 + sig);
    }
    auto now = std::chrono::steady_clock::now();
    if (interval_s_ > 0 && now - last_line >= std::chrono::seconds(interval_s_)) {
      last_line = now;
      out_.progress_line();
    }
  }
}

void Output::start_event(const Job& job, std::uint64_t resume_from, std::size_t ranges) {
  std::string split = ranges > 1 ? " in " + std::to_string(ranges) + " ranges" : "";
  if (resume_from > 0)
    event("file", "RESUME", job.spec.path,
          (ranges > 1
               ? std::to_string(resume_from) + " of " + std::to_string(job.spec.size) + " bytes already there" + split
               : "from byte " + std::to_string(resume_from) + " of " + std::to_string(job.spec.size)),
          false, {{"from", resume_from}, {"size", job.spec.size}, {"ranges", ranges}});
  else
    event("file", "FETCH", job.spec.path, human_bytes(job.spec.size) + split, false,
          {{"size", job.spec.size}, {"ranges", ranges}});
}

void Output::on_retry(const Job& job, const std::string& why, double delay_s) {
  char d[32];
  std::snprintf(d, sizeof d, "%.1f", delay_s);
  event("file", "RETRY", job.spec.path, why + "; trying again in " + d + " s", false, {{"delay_s", delay_s}});
}

void Output::on_restart(const Job& job, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    tally_.restart(job.spec.path);
  }
  event("file", "RESTART", job.spec.path, why, false);
}

namespace {
// What went wrong without failing anything (a stamp not written): said, never an exit code.
void warn(Output& out, const std::string& path, const std::string& warning) {
  if (!warning.empty()) out.event("warning", "WARNING", path, warning, true, {});
}
}  // namespace

void Output::on_finish(const Job& job, const JobResult& r) {
  {
    std::lock_guard lock(mu_);
    tally_.finish(job.spec.path, job.spec.size);
  }
  warn(*this, job.spec.path, r.warning);
  auto f = download::to_json(job, r);
  const std::string source = provkit::http::redact_url(r.source);  // the library's: where it was asked
  f["source"] = source;
  if (r.outcome == Outcome::mismatch && from_mirror_)  // not the Hub's file changing: the mirror's copy is wrong
    return event("file", "MIRROR WRONG BYTES", job.spec.path,
                 "the mirror " + source + " served bytes that fail verification (" +
                     download::mismatch_name(r.mismatch) + ": " + r.message + "); fetching it from the next source",
                 true, f);
  if (r.outcome == Outcome::failed && from_mirror_)  // refused or cut off there: the next source is asked
    return event("file", "MIRROR FAILED", job.spec.path,
                 "the mirror " + source + " did not serve it (" + r.message + "); fetching it from the next source",
                 true, f);
  switch (r.outcome) {
    case Outcome::present: return event("file", "OK", job.spec.path, in_place_detail(r.from_stamp), false, f);
    case Outcome::downloaded:
      return event("file", "OK", job.spec.path,
                   "downloaded and verified (" + human_bytes(r.bytes_transferred) + " transferred)", false, f);
    case Outcome::mismatch:
      return event("file", download::mismatch_name(r.mismatch), job.spec.path, r.message, true, f);
    case Outcome::failed: return event("file", "FAILED", job.spec.path, r.message, true, f);
  }
}

void Output::on_verified(const hub::FileCheck& c) {
  const auto& v = c.verification;
  if (!c.dropped_into.empty())
    return event("verify", "DROPPED", c.path,
                 "removed after " + c.dropped_into + " was assembled from it and verified (checked on its own line)",
                 false, {{"size", c.spec.size}, {"dropped_into", c.dropped_into}});
  event("verify", download::state_name(v.state), c.path, mismatch_detail(c.spec, v), v.state != FileState::ok,
        hub::to_json(c));
}

void Output::on_checked_in_place(const hub::FileCheck& c, const provkit::hub::hfcache::Layout& layout) {
  const auto& v = c.verification;
  warn(*this, c.path, v.stamp_warning);
  auto f = hub::to_json(c);
  f["bytes_transferred"] = 0;
  if (!c.dropped_into.empty()) {
    f["verified_by"] = "output";
    f["dropped_into"] = c.dropped_into;
    return event("file", "OK", c.path, "dropped after " + c.dropped_into + " verified; that output is in place", false,
                 f);
  }
  if (v.state == FileState::ok) {
    f["verified_by"] = v.from_stamp ? "stamp" : "hash";
    event("file", "OK", c.path, in_place_detail(v.from_stamp), false, f);
  } else {
    event("file", download::state_name(v.state), c.path,
          v.state == FileState::missing ? "not in " + layout.describe() + "; offline, so not downloaded"
                                        : mismatch_detail(c.spec, v),
          true, f);
  }
}

void Output::on_assembled(const hub::Assembly& a) {
  const auto& r = a.result;
  const auto& e = *a.entry;
  warn(*this, e.output, r.warning);
  if (r.outcome == download::AssembleOutcome::mismatch)
    return event("assemble", download::mismatch_name(r.mismatch), e.output, r.message, true, download::to_json(r));
  if (r.outcome == download::AssembleOutcome::refused)
    return event("assemble", "GGUF SPLIT PARTS", e.output, r.message, true, nlohmann::json::object());
  auto f = download::to_json(r);
  if (a.parts_dropped) f["parts_dropped"] = true;
  event("assemble", "OK", e.output,
        a.parts_dropped ? "in place and verified; its parts were dropped"
        : r.outcome == download::AssembleOutcome::unchanged
            ? "parts unchanged since the last assembly"
            : "assembled from " + std::to_string(e.parts.size()) + " parts" + (e.sha256 ? " and verified" : ""),
        false, f);
}

void Output::on_dropped(const hub::DroppedPart& d) {
  event("drop", "DROPPED", d.path,
        "removed now that " + d.output + " is verified (" + human_bytes(d.freed_bytes) + " freed)", false,
        {{"dropped_into", d.output}, {"freed_bytes", d.freed_bytes}});
}

void Output::on_source_lacks(const std::string& url, const hub::UpstreamCheck& c) {
  std::string why = c.state == hub::UpstreamState::not_in_tree ? "not in its tree" : c.detail;
  event("file", "NOT ON MIRROR", c.path,
        "the mirror " + provkit::http::redact_url(url) + " does not have it (" + why +
            "); fetching it from the next source",
        false, {{"source", provkit::http::redact_url(url)}});
}

void Output::on_upstream(const hub::UpstreamCheck& c) {
  std::string detail = c.state == hub::UpstreamState::not_in_tree ? "the Hub's tree at this revision does not have it"
                                                                  : c.detail;
  nlohmann::json fields = nlohmann::json::object();
  if (c.local_copy_verifies) {
    detail += "; the copy here verifies against the manifest";
    fields["local_copy_verifies"] = true;
  }
  event("upstream", hub::upstream_state_name(c.state), c.path, c.state == hub::UpstreamState::ok ? c.detail : detail,
        c.state != hub::UpstreamState::ok, std::move(fields));
}

void Output::on_space_plan(const hub::SpacePlan& p, bool dry_run) {
  using Action = hub::FilePlan::Action;
  to_fetch_ = static_cast<std::size_t>(std::count_if(p.files.begin(), p.files.end(), [](const hub::FilePlan& f) {
    return f.action != Action::in_place;
  }));
  if (!dry_run) return;  // a fetch shows what it does as it does it
  for (const auto& f : p.files) {
    if (!f.dropped_into.empty()) {
      event("plan", hub::action_name(f.action), f.path, "dropped after " + f.dropped_into + " verified", false,
            {{"size", f.size}, {"have", 0}, {"allocated", 0}, {"dropped_into", f.dropped_into}});
      continue;
    }
    event("plan", hub::action_name(f.action), f.path,
          f.action == Action::fetch    ? human_bytes(f.size)
          : f.action == Action::resume ? human_bytes(f.have) + " of " + human_bytes(f.size) + " already there"
                                       : human_bytes(f.size) + " there (verified when fetched)",
          false, {{"size", f.size}, {"have", f.have}, {"allocated", f.allocated}});
  }
  for (const auto& a : p.assemblies)
    event("plan", a.in_place ? "IN PLACE" : "ASSEMBLE", a.output, human_bytes(a.size), false, {{"size", a.size}});
}

void Output::on_source(const std::string& url, bool mirror) {
  {
    std::lock_guard lock(mu_);
    from_mirror_ = mirror;
  }
  if (mirror) note("trying the mirror " + provkit::http::redact_url(url));
}

void Output::on_source_failed(const std::string& url, const std::string& why) {
  event("source", "MIRROR SKIPPED", provkit::http::redact_url(url), why + "; going on with the next source", false,
        {{"source", provkit::http::redact_url(url)}});
}

void Output::on_sources_unreachable(const std::vector<hub::SourceFailure>& failed) {
  std::string which;
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& f : failed) {
    which += (which.empty() ? "" : "; ") + f.why;
    sources.push_back(provkit::http::redact_url(f.url));
  }
  event("warning", "WARNING", "",
        "the sources could not be reached (" + which +
            "); every file is in place and verified, so the verified local copy is served as --offline would "
            "serve it (the Hub's tree was not compared)",
        true, {{"sources", std::move(sources)}});
}

void Output::on_plan(const hub::Manifest& m, const hub::hfcache::Layout& layout, const hub::DownloadPlan& plan) {
  // The files in place are checked, not fetched: a rerun with nothing to fetch says so.
  const std::size_t n = plan.size(), fetch = std::min(n, to_fetch_.value_or(n));
  auto files = [](std::size_t k) { return std::to_string(k) + (k == 1 ? " file" : " files"); };
  note((fetch == 0   ? "checking " + files(n) + " in place (" + human_bytes(plan.total_bytes) + ") of "
        : fetch == n ? "fetching " + files(n) + " (" + human_bytes(plan.total_bytes) + ") of "
                     : "fetching " + std::to_string(fetch) + " of " + files(n) + " (" + human_bytes(plan.total_bytes) +
                           "; the others are in place and checked) of ") +
       m.repo.id + " at " + m.revision + (fetch == 0 ? " in " : " into ") + layout.describe());
  begin_downloads(plan.total_bytes, plan.size());
}

}  // namespace hffetch
