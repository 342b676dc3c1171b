#include "provkit/http_url.hpp"

#include <cctype>

#include "http_text.hpp"

namespace provkit::http {

using detail::lower;
using detail::parse_u64;
using detail::trim;

std::optional<Url> Url::parse(std::string_view text) {
  auto sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  Url u;
  u.scheme = lower(text.substr(0, sep));
  if (u.scheme != "http" && u.scheme != "https") return std::nullopt;
  std::string_view rest = text.substr(sep + 3);
  auto hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  auto path_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_start);
  u.target = path_start == std::string_view::npos ? "/" : std::string(rest.substr(path_start));
  if (u.target.front() == '?') u.target = "/" + u.target;
  u.authority = std::string(authority);
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    u.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    u.host = lower(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else {
    auto colon = authority.rfind(':');
    u.host = lower(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return std::nullopt;
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    std::uint64_t p;
    if (!parse_u64(port, p) || p == 0 || p > 65535) return std::nullopt;
    u.port = static_cast<int>(p);
  }
  return u;
}

std::string Url::origin() const {
  bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

namespace {
// RFC 3986 5.2.4.
std::string remove_dot_segments(std::string path) {
  std::string out;
  while (!path.empty()) {
    if (path.starts_with("../")) path.erase(0, 3);
    else if (path.starts_with("./")) path.erase(0, 2);
    else if (path.starts_with("/./")) path.erase(0, 2);
    else if (path == "/.") path = "/";
    else if (path.starts_with("/../") || path == "/..") {
      path = path == "/.." ? "/" : path.substr(3);
      auto slash = out.rfind('/');
      out.erase(slash == std::string::npos ? 0 : slash);
    } else if (path == "." || path == "..") path.clear();
    else {
      auto next = path.find('/', path[0] == '/' ? 1 : 0);
      out += path.substr(0, next);
      path.erase(0, next == std::string::npos ? path.size() : next);
    }
  }
  return out;
}
}  // namespace

std::string resolve_reference(const std::string& base, const std::string& location) {
  std::string loc(trim(location));
  // Absolute: it has a scheme.
  auto colon = loc.find(':');
  if (colon != std::string::npos && colon > 0 && std::isalpha(static_cast<unsigned char>(loc[0])) &&
      loc.find_first_of("/?#") > colon)
    return loc;
  auto b = Url::parse(base);
  if (!b) return loc;
  if (loc.starts_with("//")) return b->scheme + ":" + loc;
  std::string prefix = b->scheme + "://" + b->authority;
  std::string base_path = b->target.substr(0, b->target.find('?'));
  if (loc.empty()) return prefix + b->target;
  if (loc[0] == '/') {
    auto q = loc.find('?');
    return prefix + remove_dot_segments(loc.substr(0, q)) + (q == std::string::npos ? "" : loc.substr(q));
  }
  if (loc[0] == '?') return prefix + base_path + loc;
  auto q = loc.find('?');
  std::string dir = base_path.substr(0, base_path.rfind('/') + 1);
  return prefix + remove_dot_segments(dir + loc.substr(0, q)) + (q == std::string::npos ? "" : loc.substr(q));
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string redact_url(const std::string& url) {
  std::string s = url.substr(0, url.find_first_of("?#"));
  auto sep = s.find("://");
  if (sep == std::string::npos) return s;
  auto auth_end = s.find('/', sep + 3);
  auto at = s.rfind('@', auth_end == std::string::npos ? std::string::npos : auth_end);
  if (at != std::string::npos && at > sep) s.erase(sep + 3, at - sep - 2);
  return s;
}

}  // namespace provkit::http
