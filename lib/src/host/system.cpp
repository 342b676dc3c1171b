#include "provkit/host/system.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "provkit/error.hpp"

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

bool port_free(int port, std::string& why) {
  if (port < 1 || port > 65535) {
    why = "not a port number";
    return false;
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::strerror(errno);
    return false;
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (!ok) why = std::strerror(errno);
  ::close(fd);
  return ok;
}

std::pair<std::string, std::string> split_assignment(std::string_view text) {
  auto eq = text.rfind('=');
  if (eq == std::string_view::npos) return {std::string(text), ""};
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

}  // namespace provkit::host
