#pragma once
// The one trace facility: what the library decided and why (each request, each step of the download engine
// and its ramp, each plan decision, each file opened for writing), for an operator reading a run after the
// fact. The library never prints: it hands each line to the sink a tool installed (--debug or
// PROVKIT_LOG=debug; cli::start_trace), and with no sink a trace costs one relaxed load and builds nothing.
//
//   util::log::debug("download", [&] { return "range " + std::to_string(a) + "-" + std::to_string(b); });
//
// `domain` is the library domain ("download", "hub", "python", ...). Text from outside may be in the
// message: the sink makes it printable, the caller need not.
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

namespace provkit::util::log {

// Receives one line (no newline) and the domain it is from; called from any thread, one call at a time.
using Sink = std::function<void(std::string_view domain, std::string_view message)>;

// Installs `sink` (an empty one turns tracing off). Not for use while other threads trace.
void set_sink(Sink sink);
bool enabled();
void write(std::string_view domain, std::string_view message);

// Traces what `make` returns (a std::string, or anything a std::string_view takes), calling it only when a
// sink is installed.
template <class Make>
requires std::is_invocable_v<Make>
void debug(std::string_view domain, Make&& make) {
  if (enabled()) write(domain, std::forward<Make>(make)());
}
inline void debug(std::string_view domain, std::string_view message) {
  if (enabled()) write(domain, message);
}

}  // namespace provkit::util::log
