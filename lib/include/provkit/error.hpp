#pragma once
// Exit codes shared by every provkit tool, and the typed error the library
// throws. The library never prints and never exits: tools catch provkit::Error
// and turn it into one sentence on stderr and this exit code.
#include <stdexcept>
#include <string>

namespace provkit {

enum class ExitCode : int {
  ok = 0,
  check_failed = 1,   // a verification or check failed
  usage = 2,          // usage error or invalid input file (names file and line)
  network = 3,        // network or upstream failure after retries
  auth = 4,           // authentication or access refused
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// An input file is wrong at a place: the message reads "FILE:LINE: what".
inline Error input_error(const std::string& file, int line, const std::string& what) {
  return Error(ExitCode::usage, file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + what);
}

}  // namespace provkit
