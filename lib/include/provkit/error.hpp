#pragma once
// Exit codes shared by every provkit tool, and the typed error the library
// throws. The library never prints and never exits: tools catch provkit::Error
// and turn it into one sentence on stderr and this exit code.
#include <stdexcept>
#include <string>
#include <string_view>

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

// Text from outside (file contents, names, upstream answers) made safe to
// print: control bytes (C0, DEL) written as \n, \r, \t or \xNN, so that a
// message is one line, cannot drive the terminal, and a NUL cannot cut it short.
inline std::string escape_control(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) out += ch;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

// An input file is wrong at a place: the message reads "FILE:LINE: what",
// with control bytes escaped (what quotes the input).
inline Error input_error(const std::string& file, int line, const std::string& what) {
  return Error(ExitCode::usage,
               escape_control(file) + (line > 0 ? ":" + std::to_string(line) : "") + ": " + escape_control(what));
}

}  // namespace provkit
