// libFuzzer target: the HTTP header and URL parsers of provkit::http
// (parse_header_line, parse_link_next, parse_content_range,
// parse_retry_after, parse_ratelimit, Url::parse, resolve_reference, redact_url,
// is_safe_header_value).
// They are pure and never throw: every input must return normally, and what
// they return must hold together (checked below).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "provkit/http/http.hpp"

namespace http = provkit::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  std::string name, value;
  if (http::parse_header_line(text, name, value) && name.empty()) std::abort();

  if (auto next = http::parse_link_next(text); next && next->size() > text.size()) std::abort();

  if (auto r = http::parse_content_range(text)) {
    if (r->last < r->first) std::abort();
    if (r->total && r->last >= *r->total) std::abort();
  }

  // A fixed "now" keeps runs reproducible.
  auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  if (auto s = http::parse_retry_after(text, now); s && !(*s >= 0)) std::abort();

  // RateLimit / RateLimit-Policy (the first line is one, the rest the other):
  // whatever they say, a wait is a finite non-negative number of seconds.
  auto nl = text.find('\n');
  auto policy = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  if (auto rl = http::parse_ratelimit(text.substr(0, nl), policy)) {
    double wait = http::ratelimit_spacing_s(*rl);
    if (!(wait >= 0) || wait > 1e20) std::abort();
  }

  if (auto u = http::Url::parse(text)) {
    if (u->host.empty() || u->port <= 0 || u->port > 65535 || u->target.empty() || u->target[0] != '/') std::abort();
    (void)u->origin();
  }

  // A Location header resolved against a fixed base, and the redaction used in messages.
  std::string location(text);
  std::string resolved = http::resolve_reference("https://user:pw@hub.example:8443/api/models/a/b?x=1", location);
  std::string redacted = http::redact_url(resolved);
  if (redacted.find('?') != std::string::npos) std::abort();
  // No userinfo may survive in the authority of a redacted URL.
  if (auto sep = redacted.find("://"); sep != std::string::npos) {
    auto authority = std::string_view(redacted).substr(sep + 3);
    if (authority.substr(0, authority.find('/')).find('@') != std::string_view::npos) std::abort();
  }
  (void)http::redact_url(location);

  // What Session::add lets onto the wire: never a value that could end a header line.
  if (http::is_safe_header_value(text) && text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos)
    std::abort();
  return 0;
}
