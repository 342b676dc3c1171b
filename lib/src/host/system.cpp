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
  // /proc/net/tcp{,6}: "sl local_address rem_address st ... uid timeout inode"; LISTEN is st 0A.
  std::map<std::string, std::string> inodes;  // socket inode -> listening address
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
      if (colon == std::string::npos || std::strtol(local.c_str() + colon + 1, nullptr, 16) != port) continue;
      const auto hex = local.substr(0, colon);
      std::string address;
      if (hex.size() == 8) {
        in_addr a{static_cast<in_addr_t>(std::strtoul(hex.c_str(), nullptr, 16))};
        char buf[INET_ADDRSTRLEN];
        address = ::inet_ntop(AF_INET, &a, buf, sizeof buf) ? buf : hex;
      } else if (hex.size() == 32) {
        in6_addr a{};
        for (std::size_t w = 0; w < 4; ++w) {
          auto word = static_cast<std::uint32_t>(std::strtoul(hex.substr(w * 8, 8).c_str(), nullptr, 16));
          std::memcpy(a.s6_addr + w * 4, &word, 4);  // each 32-bit word in host order
        }
        char buf[INET6_ADDRSTRLEN];
        address = ::inet_ntop(AF_INET6, &a, buf, sizeof buf) ? buf : hex;
      }
      inodes.emplace("socket:[" + inode + "]", address);
    }
  }
  if (inodes.empty()) return std::nullopt;
  std::error_code ec;
  for (fs::directory_iterator it(proc, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fec;
    for (fs::directory_iterator fd(it->path() / "fd", fec), fend; !fec && fd != fend; fd.increment(fec)) {
      std::error_code lec;
      auto target = fs::read_symlink(fd->path(), lec);
      if (lec) continue;
      auto hit = inodes.find(target.string());
      if (hit == inodes.end()) continue;
      PortHolder h{.pid = std::atoi(name.c_str()), .address = hit->second};
      std::ifstream cmd(it->path() / "cmdline", std::ios::binary);
      std::string raw((std::istreambuf_iterator<char>(cmd)), {});
      while (!raw.empty() && raw.back() == '\0') raw.pop_back();
      // One line for a sentence: control characters (a `python -c` script's newlines) become spaces.
      for (auto& c : raw)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
      if (raw.size() > 160) raw = raw.substr(0, 157) + "...";
      h.command = raw;
      return h;
    }
  }
  return PortHolder{.address = inodes.begin()->second};
}

std::pair<std::string, std::string> split_assignment(std::string_view text) {
  auto eq = text.rfind('=');
  if (eq == std::string_view::npos) return {std::string(text), ""};
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

}  // namespace provkit::host
