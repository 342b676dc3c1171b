#include "provkit/hostcheck.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "provkit/error.hpp"

namespace provkit::hostcheck {

std::uint64_t parse_size(std::string_view text) {
  auto bad = [&]() {
    return Error(ExitCode::usage, "'" + std::string(text) + "' is not a size (expected e.g. 500M, 24G, 24GiB, 80GB, 1.5T)");
  };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string number(text.substr(0, i));
  std::string unit(text.substr(i));
  if (number.empty() || number.front() == '.' || number.back() == '.' ||
      number.find('.') != number.rfind('.'))
    throw bad();
  double value = std::stod(number);
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  static const std::string letters = "KMGTP";
  double scale = 1;
  if (!unit.empty() && unit != "B") {
    char letter = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    auto power = letters.find(letter);
    if (power == std::string::npos) throw bad();
    std::string rest = unit.substr(1);
    double base;
    if (rest.empty() || rest == "i" || rest == "iB") base = 1024;
    else if (rest == "B") base = 1000;
    else throw bad();
    scale = std::pow(base, static_cast<double>(power + 1));
  }
  double bytes = value * scale;
  if (bytes >= 1.8e19) throw bad();
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string format_size(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

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

}  // namespace provkit::hostcheck
