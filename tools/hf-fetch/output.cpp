#include "output.hpp"

#include <cstdio>
#include <iostream>

#include "provkit/hostcheck.hpp"

namespace hffetch {

using provkit::fetch::Job;
using provkit::fetch::JobResult;
using provkit::fetch::Mismatch;
using provkit::fetch::Outcome;

// One size format for every tool's messages.
std::string human_bytes(std::uint64_t n) { return provkit::hostcheck::format_size(n); }

void Reporter::print(const std::string& text, bool problem) {
  clear_progress();
  (problem ? std::cerr : std::cout) << text << std::endl;
  draw_progress(true);
}

void Reporter::event(const std::string& kind, const std::string& status, const std::string& path,
                     const std::string& detail, bool problem, nlohmann::json fields) {
  if (mode_ == Mode::json) {
    if (quiet_ && !problem) return;
    nlohmann::json ev = {{"event", kind}, {"status", status}, {"path", path}};
    if (!detail.empty()) ev["detail"] = detail;
    for (auto& [k, v] : fields.items()) ev[k] = v;
    std::cout << ev.dump() << std::endl;
    return;
  }
  if (quiet_ && !problem) return;
  print(status + " " + path + (detail.empty() ? "" : ": " + detail), problem);
}

void Reporter::note(const std::string& text) {
  if (mode_ == Mode::json || quiet_) return;
  print(text, false);
}

void Reporter::error(const provkit::Error& e) {
  if (mode_ == Mode::json) {
    int code = static_cast<int>(e.code());
    std::cout << nlohmann::json{{"event", "error"}, {"message", e.what()}, {"exit_code", code}}.dump() << "\n"
              << nlohmann::json{{"event", "summary"}, {"error", e.what()}, {"exit_code", code}}.dump() << std::endl;
    return;
  }
  clear_progress();
  std::cerr << "hf-fetch: " << e.what() << std::endl;
}

void Reporter::summary(nlohmann::json fields, const std::string& text, bool problem) {
  if (mode_ == Mode::json) {
    fields["event"] = "summary";
    std::cout << fields.dump() << std::endl;
    return;
  }
  clear_progress();
  progress_shown_ = false;
  mode_ = mode_ == Mode::tty ? Mode::plain : mode_;  // no more redraws
  if (quiet_ && !problem) return;
  (problem ? std::cerr : std::cout) << text << std::endl;
}

void Reporter::begin_downloads(std::uint64_t total_bytes, std::size_t files) {
  total_bytes_ = total_bytes;
  files_ = files;
  started_ = std::chrono::steady_clock::now();
}

void Reporter::on_start(const Job& job, std::uint64_t resume_from, std::size_t ranges) {
  current_[job.spec.path] = resume_from;
  sizes_[job.spec.path] = job.spec.size;
  std::string split = ranges > 1 ? " in " + std::to_string(ranges) + " ranges" : "";
  if (resume_from > 0)
    event("file", "RESUME", job.spec.path,
          (ranges > 1 ? std::to_string(resume_from) + " of " + std::to_string(job.spec.size) + " bytes already there" + split
                      : "from byte " + std::to_string(resume_from) + " of " + std::to_string(job.spec.size)),
          false, {{"from", resume_from}, {"size", job.spec.size}, {"ranges", ranges}});
  else if (mode_ != Mode::tty)
    event("file", "FETCH", job.spec.path, human_bytes(job.spec.size) + split, false,
          {{"size", job.spec.size}, {"ranges", ranges}});
  draw_progress(true);
}

void Reporter::on_progress(const Job& job, std::uint64_t have) {
  auto& cur = current_[job.spec.path];
  if (have > cur) transferred_ += have - cur;
  cur = have;
  draw_progress(false);
}

void Reporter::on_retry(const Job& job, const std::string& why, double delay_s) {
  char d[32];
  std::snprintf(d, sizeof d, "%.1f", delay_s);
  event("file", "RETRY", job.spec.path, why + "; trying again in " + d + " s", false, {{"delay_s", delay_s}});
}

void Reporter::on_restart(const Job& job, const std::string& why) {
  current_[job.spec.path] = 0;
  event("file", "RESTART", job.spec.path, why, false);
}

void Reporter::on_finish(const Job& job, const JobResult& r) {
  current_.erase(job.spec.path);
  ++files_done_;
  done_bytes_ += job.spec.size;
  nlohmann::json f = {{"size", job.spec.size}, {"bytes_transferred", r.bytes_transferred}};
  if (!r.sha256.empty()) f["sha256"] = r.sha256;
  switch (r.outcome) {
    case Outcome::present:
      f["verified_by"] = r.from_stamp ? "stamp" : "hash";
      event("file", "OK", job.spec.path,
            r.from_stamp ? "already in place, unchanged since it was verified" : "already in place and verified", false,
            f);
      break;
    case Outcome::downloaded:
      event("file", "OK", job.spec.path, "downloaded and verified (" + human_bytes(r.bytes_transferred) + " transferred)",
            false, f);
      break;
    case Outcome::mismatch:
      f["rejected"] = r.rejected.string();
      if (job.spec.sha256) f["expected_sha256"] = *job.spec.sha256;
      event("file",
            r.mismatch == Mismatch::size     ? "SIZE MISMATCH"
            : r.mismatch == Mismatch::sha256 ? "SHA256 MISMATCH"
                                             : "GIT OID MISMATCH",
            job.spec.path, r.message, true, f);
      break;
    case Outcome::failed:
      f["exit_code"] = static_cast<int>(r.code);
      event("file", "FAILED", job.spec.path, r.message, true, f);
      break;
  }
}

void Reporter::clear_progress() {
  if (mode_ != Mode::tty || !progress_shown_) return;
  std::cout << "\r\033[K" << std::flush;
  progress_shown_ = false;
}

void Reporter::draw_progress(bool force) {
  if (mode_ != Mode::tty || quiet_ || total_bytes_ == 0) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  if (current_.empty()) {
    clear_progress();
    return;
  }
  double secs = std::chrono::duration<double>(now - started_).count();
  double rate = secs > 0.2 ? static_cast<double>(transferred_) / secs : 0;
  std::uint64_t done = done_bytes_;
  for (auto& [p, n] : current_) done += n;
  std::string eta = "--:--";
  if (rate > 0 && total_bytes_ > done) {
    auto s = static_cast<long>((total_bytes_ - done) / rate);
    char b[32];
    std::snprintf(b, sizeof b, "%ld:%02ld", s / 60, s % 60);
    eta = b;
  }
  const auto& [path, have] = *current_.begin();
  std::string name = path.size() > 40 ? "..." + path.substr(path.size() - 37) : path;
  std::string line = "[" + std::to_string(files_done_ + 1) + "/" + std::to_string(files_) + "] " + name + " " +
                     human_bytes(have) + "/" + human_bytes(sizes_[path]) + " | total " + human_bytes(done) + "/" +
                     human_bytes(total_bytes_) + " " + human_bytes(static_cast<std::uint64_t>(rate)) + "/s ETA " + eta;
  std::cout << "\r\033[K" << line << std::flush;
  progress_shown_ = true;
}

}  // namespace hffetch
