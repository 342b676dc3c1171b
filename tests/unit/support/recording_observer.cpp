#include "support/recording_observer.hpp"

namespace provkit::test {

void RecordingObserver::on_start(const download::Job& job, std::uint64_t resume_from, std::size_t n) {
  events.push_back("start " + job.spec.path + " " + std::to_string(resume_from));
  ranges[job.spec.path] = n;
}

void RecordingObserver::on_progress(const download::Job& job, std::uint64_t have) { progress[job.spec.path] = have; }

void RecordingObserver::on_retry(const download::Job& job, const std::string& why, double) {
  events.push_back("retry " + job.spec.path);
  retry_reasons.push_back(why);
}

void RecordingObserver::on_restart(const download::Job& job, const std::string& why) {
  events.push_back("restart " + job.spec.path);
  restart_reasons.push_back(why);
}

void RecordingObserver::on_finish(const download::Job& job, const download::JobResult& result) {
  events.push_back("finish " + job.spec.path);
  results[job.spec.path] = result;
}

}  // namespace provkit::test
