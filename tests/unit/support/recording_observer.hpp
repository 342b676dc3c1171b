// A download::Observer that records every call, for assertions on what the
// download engine reported and in which order.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "provkit/download/downloader.hpp"

namespace provkit::test {

class RecordingObserver : public download::Observer {
 public:
  void on_start(const download::Job& job, std::uint64_t resume_from, std::size_t ranges) override;
  void on_progress(const download::Job& job, std::uint64_t have) override;
  void on_retry(const download::Job& job, const std::string& why, double delay_s) override;
  void on_restart(const download::Job& job, const std::string& why) override;
  void on_finish(const download::Job& job, const download::JobResult& result) override;

  // Every event but progress, in order: "start PATH RESUME_FROM", "retry PATH", "restart PATH", "finish PATH".
  std::vector<std::string> events;
  std::vector<std::string> retry_reasons;              // on_retry's `why`, in order
  std::vector<std::string> restart_reasons;            // on_restart's `why`, in order
  std::map<std::string, std::size_t> ranges;           // path -> ranges announced at its start
  std::map<std::string, std::uint64_t> progress;       // path -> the last `have` reported
  std::map<std::string, download::JobResult> results;  // path -> what on_finish was given
};

}  // namespace provkit::test
