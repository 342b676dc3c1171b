#pragma once
// Who a process is, as an operator names it: its command line, the systemd
// unit it runs in (from its cgroup) and the TCP ports it listens on (from
// /proc/net/tcp{,6} and its fd links). One scan of the listening sockets
// serves port_holder (--port-free) and the GPU seat map alike.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::host {

namespace fs = std::filesystem;

struct ListeningSocket {
  int port = 0;
  std::string address;  // "127.0.0.1", "::"
};
// The LISTEN sockets of /proc/net/tcp and tcp6 by their fd link text
// ("socket:[12345]"); only those on `port` when one is given.
std::map<std::string, ListeningSocket> listening_sockets(const fs::path& proc_root,
                                                         std::optional<int> port = std::nullopt);
// Those of `sockets` that process `pid` holds an fd of, in fd order. `readable` is false when its
// fd folder could not be listed (another user's process, without root).
std::vector<ListeningSocket> sockets_of(int pid, const std::map<std::string, ListeningSocket>& sockets,
                                        const fs::path& proc_root, bool& readable);
// /proc/PID/cmdline, arguments joined by spaces, control characters as spaces, at most 160 characters.
std::string command_line(int pid, const fs::path& proc_root);

// The systemd service a process runs in, read from the text of /proc/PID/cgroup:
// "0::/system.slice/llama-server@0.service" -> {"llama-server@0.service", user=false};
// a service under user@UID.service is a user unit. Cgroup v2's "0::" line is read
// first, then v1's "name=systemd" one. nullopt when the process is in no service
// (a login session's scope, a container's, the root cgroup).
struct SystemdUnit {
  std::string name;
  bool user = false;  // a unit of `systemctl --user`
  int uid = -1;       // the user manager's uid for a user unit
};
std::optional<SystemdUnit> unit_from_cgroup(std::string_view cgroup_text);
// The command that stops it: "systemctl stop NAME" or "systemctl --user stop NAME".
std::string stop_command(const SystemdUnit& unit);

// Everything above for one process.
struct ProcessFacts {
  int pid = 0;
  std::string command;  // "" when /proc has no such process
  std::optional<SystemdUnit> unit;
  std::vector<ListeningSocket> ports;  // the TCP ports it listens on
  bool ports_readable = true;          // false: its fds are another user's to read
};
ProcessFacts describe_process(int pid, const std::map<std::string, ListeningSocket>& sockets,
                              const fs::path& proc_root = "/proc");

}  // namespace provkit::host
