#pragma once
// Exit codes shared by every provkit tool, and the typed error the library
// throws. The library never prints and never exits: tools catch provkit::Error
// and turn it into one sentence on stderr and this exit code.
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

namespace provkit {

enum class ExitCode : int {
  ok = 0,
  check_failed = 1,  // a verification or check failed
  usage = 2,         // usage error or invalid input file (names file and line)
  network = 3,       // network or upstream failure after retries
  auth = 4,          // authentication or access refused
  // hf-fetch: the Hub's tree moved on from the pinned manifest while every file here still verifies against
  // it (hub::UpstreamRefusal::moved): the copy here can be served, nothing here is wrong.
  upstream_moved = 5,
};

// Why something failed, for scripts to branch on (--json's "reason", docs/json.md). Each domain has its own
// enum (hub::HubRefusal, pyspec::LockRefusal, download::FileFailure, ...) with, in its namespace,
// `std::string_view reason_name(R)` and `ExitCode exit_code(R)`; ReasonId carries any of them without the
// error knowing the domain. These are the reasons every domain shares.
enum class Reason {
  usage,          // 2: the command line is wrong
  invalid_input,  // 2: a file or value given is wrong (it names the file and line)
  check_failed,   // 1: a check or verification failed (no more specific reason known)
  network,        // 3: a network or upstream failure after retries
  auth,           // 4: authentication or access refused
  internal,       // 3: an error provkit did not expect
  interrupted,    // stopped by a signal (exit code: 128 + the signal)
};
std::string_view reason_name(Reason r);
ExitCode exit_code(Reason r);
// The shared reason an exit code stands for when nothing more specific is known.
Reason reason_for(ExitCode code);

// One reason of any domain's enum, by type and value, with its name and exit code.
class ReasonId {
 public:
  template <class R>
  requires std::is_enum_v<R> ReasonId(R r)
      : domain_(&typeid(R)), value_(static_cast<int>(r)), name_(reason_name(r)), code_(exit_code(r)) {
    if constexpr (requires { refusal_name(r); }) refusal_ = refusal_name(r);
  }
  template <class R>
  requires std::is_enum_v<R>
  bool is(R r) const { return *domain_ == typeid(R) && value_ == static_cast<int>(r); }
  std::string_view name() const { return name_; }
  // The domain's own name for it where its name is a shared reason (a domain that also declares
  // `std::string_view refusal_name(R)`: hub::ManifestRefusal's are all invalid_input): --json's
  // detail.refusal. Empty where the domain declares none.
  std::string_view refusal() const { return refusal_; }
  ExitCode code() const { return code_; }
  bool operator==(const ReasonId& o) const { return *domain_ == *o.domain_ && value_ == o.value_; }

 private:
  const std::type_info* domain_;
  int value_;
  std::string_view name_;
  std::string_view refusal_;
  ExitCode code_;
};

class Error : public std::runtime_error {
 public:
  // The reason is the code's shared one (reason_for).
  Error(ExitCode code, const std::string& message)
      : std::runtime_error(message), code_(code), reason_(reason_for(code)) {}
  // A domain's reason; the exit code is the reason's own.
  template <class R>
  requires std::is_enum_v<R> Error(R reason, const std::string& message)
      : std::runtime_error(message), code_(exit_code(reason)), reason_(reason) {}
  // A reason carried from elsewhere (a result's), with its exit code.
  Error(const ReasonId& reason, const std::string& message)
      : std::runtime_error(message), code_(reason.code()), reason_(reason) {}
  // The same code and reason, told in `message` (a tool adding its own advice to the library's sentence).
  Error(const Error& other, const std::string& message)
      : std::runtime_error(message), code_(other.code_), reason_(other.reason_) {}
  ExitCode code() const { return code_; }
  const ReasonId& reason() const { return reason_; }
  template <class R>
  requires std::is_enum_v<R>
  bool is(R r) const { return reason_.is(r); }

 private:
  ExitCode code_;
  ReasonId reason_;
};

inline std::string_view reason_name(Reason r) {
  switch (r) {
    case Reason::usage: return "usage";
    case Reason::invalid_input: return "invalid_input";
    case Reason::check_failed: return "check_failed";
    case Reason::network: return "network";
    case Reason::auth: return "auth";
    case Reason::internal: return "internal";
    case Reason::interrupted: return "interrupted";
  }
  return "internal";
}

inline ExitCode exit_code(Reason r) {
  switch (r) {
    case Reason::usage:
    case Reason::invalid_input: return ExitCode::usage;
    case Reason::check_failed: return ExitCode::check_failed;
    case Reason::auth: return ExitCode::auth;
    case Reason::network:
    case Reason::internal:
    case Reason::interrupted: break;
  }
  return ExitCode::network;
}

inline Reason reason_for(ExitCode code) {
  switch (code) {
    case ExitCode::check_failed: return Reason::check_failed;
    case ExitCode::usage: return Reason::invalid_input;
    case ExitCode::network: return Reason::network;
    case ExitCode::auth: return Reason::auth;
    case ExitCode::upstream_moved:  // a domain's reason only (hub::UpstreamRefusal::moved), never a shared one
    case ExitCode::ok: break;
  }
  return Reason::internal;
}

namespace util {
// The one escaper of text from outside (provkit/util/text.hpp), declared here so that every error can use it.
std::string printable(std::string_view s);
}  // namespace util

// An input file is wrong at a place: the message reads "FILE:LINE: what",
// escaped by util::printable (what quotes the input).
// The domain's `reason` (exit 2 as any malformed input, unless the reason says otherwise) or the shared
// invalid_input.
template <class R>
requires std::is_enum_v<R>
inline Error input_error(R reason, const std::string& file, int line, const std::string& what) {
  return Error(reason,
               util::printable(file) + (line > 0 ? ":" + std::to_string(line) : "") + ": " + util::printable(what));
}
inline Error input_error(const std::string& file, int line, const std::string& what) {
  return input_error(Reason::invalid_input, file, line, what);
}

}  // namespace provkit
