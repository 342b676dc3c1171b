#include "support/loopback_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <system_error>

namespace provkit::test {

LoopbackServer::LoopbackServer(const char* host, Respond respond) : respond_(std::move(respond)) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof addr;
  if (::inet_pton(AF_INET, host, &addr.sin_addr) != 1 ||
      ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd_);
    throw std::system_error(err, std::generic_category(), std::string("listening on ") + host);
  }
  base = std::string("http://") + host + ":" + std::to_string(ntohs(addr.sin_port));
  thread_ = std::thread([this] { serve(); });
}

LoopbackServer::~LoopbackServer() {
  stop_ = true;
  ::shutdown(fd_, SHUT_RDWR);
  ::close(fd_);
  thread_.join();
}

std::vector<SeenRequest> LoopbackServer::seen() {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

void LoopbackServer::serve() {
  while (!stop_) {
    int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      req.append(buf, static_cast<std::size_t>(n));
    }
    std::string line = req.substr(0, req.find("\r\n"));
    std::string headers = req.substr(line.size());
    for (auto& ch : headers) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.push_back({line, headers, std::chrono::steady_clock::now()});
    }
    std::string resp = respond_(line, headers);
    std::size_t off = 0;
    while (off < resp.size()) {
      ssize_t n = ::write(c, resp.data() + off, resp.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    ::close(c);
  }
}

std::string ranged_answer(const std::string& content, const std::string& headers) {
  auto at = headers.find("range: bytes=");
  if (at == std::string::npos)
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(content.size()) + "\r\nConnection: close\r\n\r\n" +
           content;
  std::size_t from = std::stoull(headers.substr(at + 13));
  std::size_t to = content.size() - 1;
  auto dash = headers.find('-', at + 13);
  if (dash != std::string::npos && std::isdigit(static_cast<unsigned char>(headers[dash + 1])))
    to = std::stoull(headers.substr(dash + 1));
  std::string body = content.substr(from, to - from + 1);
  return "HTTP/1.1 206 Partial Content\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nContent-Range: bytes " + std::to_string(from) + "-" + std::to_string(to) + "/" +
         std::to_string(content.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace provkit::test
