#pragma once
// The one way the library runs another program: argv
// without a shell, stdin from /dev/null, stdout captured (stderr with it,
// inherited or discarded), an optional time limit.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace provkit::util {

enum class StderrTo {
  output,   // captured with stdout, interleaved as written
  inherit,  // the caller's stderr
  discard,  // /dev/null
};

struct RunOptions {
  StderrTo stderr_to = StderrTo::output;
  // Killed (SIGKILL) when it runs longer; nullopt: no limit.
  std::optional<std::chrono::milliseconds> timeout;
  // The child's whole environment ("NAME=value"); nullopt: this process's.
  std::optional<std::vector<std::string>> env;
  // Set in the child over that environment, each replacing a variable of its name (a setting the child must
  // have whatever the caller's environment says).
  std::vector<std::pair<std::string, std::string>> env_set;
};

struct RunResult {
  int exit_status = -1;  // the exit status; -1 when it could not start, was killed or timed out
  int term_signal = 0;   // the signal that ended it (SIGKILL after a timeout), 0 when it exited
  std::string output;    // stdout (and stderr with StderrTo::output)
  bool timed_out = false;
  std::string start_error;  // why it could not start (empty when it did)
};

// Runs argv[0] (looked up on PATH when it has no '/') with argv.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// The status as a shell reports it ($?): the exit status, 128 + the signal
// that ended it, 127 when it could not start.
int shell_status(const RunResult& r);

}  // namespace provkit::util
