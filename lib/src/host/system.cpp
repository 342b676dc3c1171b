#include "system.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "provkit/error.hpp"
#include "provkit/host/processes.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::host {

std::optional<std::uint64_t> disk_free(const fs::path& path, std::string& why) {
  fs::path at = path;
  std::error_code ec;
  while (!at.empty() && !fs::exists(at, ec)) {
    if (at == at.parent_path()) break;
    at = at.parent_path();
  }
  if (at.empty()) at = ".";
  struct statvfs st {};
  if (::statvfs(at.c_str(), &st) != 0) {
    why = at.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

bool port_free(int port, std::string& why) { return port_free("0.0.0.0", port, why); }

bool is_address_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

bool port_free(const std::string& host, int port, std::string& why) {
  if (port < 1 || port > 65535) {
    why = "not a port number";
    return false;
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof *v4;
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof *v6;
  } else {
    why = "'" + host + "' is not an address";
    return false;
  }
  util::Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) {
    why = std::strerror(errno);
    return false;
  }
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bool ok = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) == 0;
  if (!ok) why = std::strerror(errno);
  return ok;
}

std::optional<PortHolder> port_holder(int port, const fs::path& proc) {
  const auto sockets = listening_sockets(proc, port);
  if (sockets.empty()) return std::nullopt;
  std::error_code ec;
  for (fs::directory_iterator it(proc, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::atoi(name.c_str());
    bool readable = true;
    if (auto held = sockets_of(pid, sockets, proc, readable); !held.empty())
      return PortHolder{.pid = pid, .command = command_line(pid, proc), .address = held.front().address};
  }
  return PortHolder{.address = sockets.begin()->second.address};
}

std::pair<std::string, std::string> split_assignment(std::string_view text) {
  auto eq = text.rfind('=');
  if (eq == std::string_view::npos) return {std::string(text), ""};
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

}  // namespace provkit::host
