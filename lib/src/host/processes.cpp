#include "provkit/host/processes.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "provkit/util/fs.hpp"

namespace provkit::host {

namespace {

// A /proc file of a process, at most `max` bytes; "" when it is gone or not ours to read (the process may end
// between the driver's list and this look).
std::string head_or_empty(const fs::path& path, std::size_t max) {
  try {
    return util::read_file_head(path, max);
  } catch (const std::exception&) {
    return "";
  }
}

// "0100007F" / 32 hex digits of /proc/net/tcp{,6} -> "127.0.0.1" / "::1".
std::string socket_address(const std::string& hex) {
  if (hex.size() == 8) {
    in_addr a{static_cast<in_addr_t>(std::strtoul(hex.c_str(), nullptr, 16))};
    char buf[INET_ADDRSTRLEN];
    return ::inet_ntop(AF_INET, &a, buf, sizeof buf) ? buf : hex;
  }
  if (hex.size() == 32) {
    in6_addr a{};
    for (std::size_t w = 0; w < 4; ++w) {
      auto word = static_cast<std::uint32_t>(std::strtoul(hex.substr(w * 8, 8).c_str(), nullptr, 16));
      std::memcpy(a.s6_addr + w * 4, &word, 4);  // each 32-bit word in host order
    }
    char buf[INET6_ADDRSTRLEN];
    return ::inet_ntop(AF_INET6, &a, buf, sizeof buf) ? buf : hex;
  }
  return hex;
}

std::string_view next_line(std::string_view& text) {
  auto nl = text.find('\n');
  auto line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return line;
}

}  // namespace

std::map<std::string, ListeningSocket> listening_sockets(const fs::path& proc, std::optional<int> port) {
  // /proc/net/tcp{,6}: "sl local_address rem_address st ... uid timeout inode"; LISTEN is st 0A.
  std::map<std::string, ListeningSocket> sockets;
  for (const char* table : {"net/tcp", "net/tcp6"}) {
    std::ifstream in(proc / table);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string sl, local, remote, st, queues, timer, retr, uid, timeout, inode;
      if (!(f >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid >> timeout >> inode) || st != "0A")
        continue;
      auto colon = local.rfind(':');
      if (colon == std::string::npos) continue;
      const auto number = static_cast<int>(std::strtol(local.c_str() + colon + 1, nullptr, 16));
      if (port && number != *port) continue;
      sockets.emplace("socket:[" + inode + "]", ListeningSocket{number, socket_address(local.substr(0, colon))});
    }
  }
  return sockets;
}

std::vector<ListeningSocket> sockets_of(int pid, const std::map<std::string, ListeningSocket>& sockets,
                                        const fs::path& proc, bool& readable) {
  std::vector<ListeningSocket> held;
  std::error_code ec;
  fs::directory_iterator fd(proc / std::to_string(pid) / "fd", ec);
  readable = !ec;
  for (fs::directory_iterator end; !ec && fd != end; fd.increment(ec)) {
    std::error_code lec;
    auto target = fs::read_symlink(fd->path(), lec);
    if (lec) continue;
    if (auto hit = sockets.find(target.string()); hit != sockets.end()) held.push_back(hit->second);
  }
  return held;
}

std::string command_line(int pid, const fs::path& proc) {
  std::string raw = head_or_empty(proc / std::to_string(pid) / "cmdline", 4096);
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  // One line for a sentence: control characters (a `python -c` script's newlines) become spaces.
  for (auto& c : raw)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (raw.size() > 160) raw = raw.substr(0, 157) + "...";
  return raw;
}

std::optional<SystemdUnit> unit_from_cgroup(std::string_view text) {
  // "hierarchy-ID:controllers:path" per line; v2's unified line is "0::PATH", v1's systemd one
  // "N:name=systemd:PATH". Both carry systemd's slice/unit path.
  std::optional<std::string_view> unified, named;
  while (!text.empty()) {
    auto line = next_line(text);
    auto first = line.find(':');
    auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    auto controllers = line.substr(first + 1, second - first - 1);
    auto path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && controllers.empty()) unified = path;
    else if (controllers == "name=systemd") named = path;
  }
  auto path = unified ? *unified : named ? *named : std::string_view();
  // The innermost service: a delegated service's sub-cgroups ("x.service/payload") still belong to x.
  std::optional<SystemdUnit> unit;
  int manager_uid = -1;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto part = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    constexpr std::string_view kService = ".service", kManager = "user@";
    if (part.size() <= kService.size() || part.substr(part.size() - kService.size()) != kService) continue;
    if (unit && unit->name.rfind(kManager, 0) == 0 && !unit->user)
      manager_uid = std::atoi(unit->name.c_str() + kManager.size());
    unit = SystemdUnit{.name = std::string(part), .user = manager_uid >= 0, .uid = manager_uid};
  }
  return unit;
}

std::string stop_command(const SystemdUnit& unit) {
  return unit.user ? "systemctl --user stop " + unit.name + " (as uid " + std::to_string(unit.uid) + ")"
                   : "systemctl stop " + unit.name;
}

ProcessFacts describe_process(int pid, const std::map<std::string, ListeningSocket>& sockets, const fs::path& proc) {
  ProcessFacts facts{.pid = pid, .command = command_line(pid, proc)};
  facts.unit = unit_from_cgroup(head_or_empty(proc / std::to_string(pid) / "cgroup", std::size_t{64} * 1024));
  facts.ports = sockets_of(pid, sockets, proc, facts.ports_readable);
  return facts;
}

}  // namespace provkit::host
