// A tiny real HTTP server on loopback for the unit tests: a thread in the test
// process, one response per connection, every request recorded.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace provkit::test {

struct SeenRequest {
  std::string request_line;
  std::string headers;  // raw, lower-cased
  std::chrono::steady_clock::time_point when;
};

class LoopbackServer {
 public:
  // `respond(request_line, raw_headers)` returns the whole raw response; the connection is closed after it.
  using Respond = std::function<std::string(const std::string& request_line, const std::string& headers)>;

  // `host`: 127.0.0.1, or 127.0.0.2 for a second origin. The port is chosen by the kernel.
  LoopbackServer(const char* host, Respond respond);
  ~LoopbackServer();
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::vector<SeenRequest> seen();

  std::string base;  // http://HOST:PORT

 private:
  void serve();

  int fd_ = -1;
  std::atomic<bool> stop_{false};
  Respond respond_;
  std::mutex mu_;
  std::vector<SeenRequest> seen_;
  std::thread thread_;
};

// The answer to a request whose headers (lower-cased) are `headers`: the bytes of `content` that a
// "range: bytes=a-[b]" header asks for as a 206, or the whole of it as a 200 without one.
std::string ranged_answer(const std::string& content, const std::string& headers);

}  // namespace provkit::test
