#pragma once
// The one machine-readable shape of every tool's --json (docs/json.md, with its JSON Schema): JSON lines,
// zero or more events ({"event": KIND, ...}), then exactly one summary, the last line:
//   {"event": "summary", "tool": "hf-fetch", "exit_code": N, "reason": "...", "message": "...", ...}
// `reason` (failures only) is a reason's name (ReasonId, provkit/error.hpp), for scripts to branch on; `message` the
// sentence a person reads. Every line goes through util::json_dump, so no byte of a name can abort it or break the
// line. Plain output's names go through util::printable (say()).
#include <atomic>
#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "provkit/cli/convention.hpp"
#include "provkit/error.hpp"

namespace provkit::cli {

// Reasons of the tools' own verdicts that no library domain names yet (the shared ones are provkit::Reason,
// the domains' their own enums; docs/json.md lists every name with its exit code).
enum class Reason {
  verification_failed,  // 1: a file or environment does not match what it must be
  differs,              // 1: envbuild diff: the two sides differ
};
std::string_view reason_name(Reason r);
ExitCode exit_code(Reason r);

class JsonLines {
 public:
  // `tool`: the program's name as the summary gives it. Lines go to `out` (std::cout when null).
  explicit JsonLines(std::string tool, std::ostream* out = nullptr);

  // One event line: `fields` with "event": `kind` first.
  void event(std::string_view kind, const nlohmann::json& fields = nlohmann::json::object());
  // The summary line, once: later calls (and events after it) write nothing. `fields` are the result's own;
  // "event", "tool", "exit_code", "reason" and "message" are set here. Returns `exit_code`.
  int summary(int exit_code, std::optional<ReasonId> reason, nlohmann::json fields = nlohmann::json::object(),
              const std::string& message = "");
  // The summary of a failure: the error's code, its reason, its sentence.
  int failure(const Error& e);
  // Whether the summary was written (readable without the lock: a signal's path may not wait for it).
  bool summarized() const { return summarized_; }

 private:
  void line(const nlohmann::json& j);
  std::string tool_;
  std::ostream& out_;
  mutable std::mutex mutex_;
  std::atomic<bool> summarized_ = false;
};

// Whether argv asks for --json (looked at before parsing, so that a command-line mistake can still end
// in a summary line).
bool wants_json(int argc, const char* const* argv);

// Prints where parsing stopped (help, version, or a command-line mistake: its sentence on stderr, and with
// --json in argv also a summary with reason "usage" on stdout). Returns the exit code.
int finish(const Stop& stop, std::string_view tool, bool json);

// The catch of last resort of a tool's main: `what` said on stderr (and with --json as a summary with reason
// "internal"); returns 3, so that a deploy script sees a failure it can retry, never an abort.
int last_resort(std::string_view tool, bool json, std::string_view what);

// Turns the trace (util/log.hpp) on when `debug` (the tool's --debug) or PROVKIT_LOG=debug: each line to
// `err` (std::cerr when null) as "TOOL: debug: DOMAIN: message", through util::printable. Returns whether on.
bool start_trace(std::string_view tool, bool debug, std::ostream* err = nullptr);

// "TOOL: sentence" for stderr, the sentence through util::printable.
std::string sentence(std::string_view tool, std::string_view text);

}  // namespace provkit::cli
