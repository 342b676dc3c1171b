#pragma once
// Host gates a deploy script wants before starting an engine: free disk,
// a free port, a file with the expected content.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace provkit::host {

namespace fs = std::filesystem;

// Bytes available to an unprivileged user on the file system holding `path`
// (the nearest existing ancestor when `path` does not exist yet).
// nullopt when it cannot be read; `why` says why.
std::optional<std::uint64_t> disk_free(const fs::path& path, std::string& why);

// Whether a TCP server could bind `port` on all IPv4 addresses now
// (SO_REUSEADDR, as servers set it, so TIME_WAIT leftovers do not count).
// `why` holds the error when it could not (EADDRINUSE, EACCES, ...).
bool port_free(int port, std::string& why);
// The same on one address (an IPv4 or IPv6 literal; "0.0.0.0" is the above).
bool port_free(const std::string& host, int port, std::string& why);
bool is_address_literal(const std::string& host);

// Who listens on TCP `port` (any address), from /proc/net/tcp{,6} and the
// processes' fd links: pid and command line. pid 0 when the socket was found
// but not its process (another user's, without root); nullopt when no socket.
struct PortHolder {
  int pid = 0;
  std::string command;  // /proc/PID/cmdline, arguments joined by spaces
  std::string address;  // the listening address, "127.0.0.1", "::"
};
std::optional<PortHolder> port_holder(int port, const fs::path& proc_root = "/proc");

// "PATH=VALUE" split at the last '='; the value is empty when there is none.
std::pair<std::string, std::string> split_assignment(std::string_view text);

}  // namespace provkit::host
