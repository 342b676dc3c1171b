// Client: the simple calls, each a Session with one transfer.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "provkit/error.hpp"
#include "provkit/http/client.hpp"
#include "provkit/http/url.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::http {

std::string_view reason_name(TransportFailure) { return reason_name(Reason::network); }
ExitCode exit_code(TransportFailure) { return ExitCode::network; }

namespace {
// The Error of a transfer that failed without a final answer.
Error failure_error(const Result& r) {
  if (r.failure == FailureKind::network) return Error(TransportFailure::no_answer, r.message);
  return Error(ExitCode::network, r.message);
}
}  // namespace

Result Client::fetch(Request request) {
  Session session(options_);
  Result out;
  std::string body;
  Transfer t;
  t.request = std::move(request);
  std::uint64_t cap = options_.max_body_bytes;
  std::string where = redact_url(t.request.url);
  t.on_head = [&](const Hop&) { body.clear(); };
  t.on_body = [&](const char* d, std::size_t n) {
    if (body.size() + n > cap)
      throw Abort(where + ": the answer is longer than the " + std::to_string(cap) + " bytes allowed for it");
    body.append(d, n);
  };
  t.on_done = [&](Result& r) { out = std::move(r); };
  session.add(std::move(t));
  session.run();
  if (out.failure != FailureKind::none) throw failure_error(out);
  if (out.response.status >= 200 && out.response.status < 300) out.response.body = std::move(body);
  return out;
}

std::string Client::get(const std::string& url, const std::string& bearer_token) {
  Request req;
  req.url = url;
  req.bearer_token = bearer_token;
  Result r = fetch(std::move(req));
  if (!r.ok())
    throw Error(ExitCode::network, redact_url(url) + ": HTTP " + std::to_string(r.response.status) + " after " +
                                       std::to_string(r.response.attempts) + " attempt(s)");
  return std::move(r.response.body);
}

void Client::download_to_file(const std::string& url, const std::filesystem::path& target,
                              const std::string& bearer_token) {
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  auto tmp = util::temp_path_beside(target, "part");
  util::Fd fd;
  auto close_fd = [&] { fd.reset(); };
  Session session(options_);
  Result out;
  Transfer t;
  t.request.url = url;
  t.request.bearer_token = bearer_token;
  t.on_head = [&](const Hop&) {  // every attempt starts the file over
    fd.reset(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd) throw Error(ExitCode::check_failed, tmp.string() + ": cannot create: " + std::strerror(errno));
  };
  t.on_body = [&](const char* d, std::size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd.get(), d, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw Error(ExitCode::check_failed, tmp.string() + ": write error: " + std::strerror(errno));
      d += w;
      n -= static_cast<std::size_t>(w);
    }
  };
  t.on_done = [&](Result& r) { out = std::move(r); };
  session.add(std::move(t));
  try {
    session.run();
  } catch (...) {
    close_fd();
    std::filesystem::remove(tmp);
    throw;
  }
  if (!out.ok()) {
    close_fd();
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    if (out.failure != FailureKind::none) throw failure_error(out);
    throw Error(ExitCode::network, redact_url(url) + ": HTTP " + std::to_string(out.response.status));
  }
  if (!fd) fd.reset(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));  // empty body
  ::fsync(fd.get());
  close_fd();
  util::rename_durable(tmp, target);
}

}  // namespace provkit::http
