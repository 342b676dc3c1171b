// URLs through libcurl's URL API (CURLU): the same parser curl itself uses for
// CURLOPT_URL and for following a redirect, so that the origin compared here
// is the one curl connects to.
#include "provkit/http/url.hpp"

#include <curl/curl.h>

#include <climits>
#include <memory>
#include <new>
#include <stdexcept>

#include "provkit/util/strings.hpp"

namespace provkit::http {

using util::lower;
using util::trim_view;

namespace {

struct CurluFree {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using Curlu = std::unique_ptr<CURLU, CurluFree>;

// One part of a parsed URL; nullopt when it has none (or curl is out of memory).
std::optional<std::string> part(CURLU* u, CURLUPart which, unsigned flags = 0) {
  char* out = nullptr;
  if (curl_url_get(u, which, &out, flags) != CURLUE_OK || !out) return std::nullopt;
  std::string s(out);
  curl_free(out);
  return s;
}

// CURLU holds C strings: text with a NUL in it is no URL.
bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

}  // namespace

std::optional<Url> Url::parse(std::string_view text) {
  if (has_nul(text)) return std::nullopt;
  Curlu u(curl_url());
  if (!u) return std::nullopt;
  // No flags: exactly what curl accepts as CURLOPT_URL (no spaces, no guessed scheme).
  if (curl_url_set(u.get(), CURLUPART_URL, std::string(text).c_str(), 0) != CURLUE_OK) return std::nullopt;
  Url url;
  url.scheme = lower(part(u.get(), CURLUPART_SCHEME).value_or(""));
  if (url.scheme != "http" && url.scheme != "https") return std::nullopt;
  std::string host = lower(part(u.get(), CURLUPART_HOST).value_or(""));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (auto zone = part(u.get(), CURLUPART_ZONEID)) host += "%25" + *zone;
  }
  if (host.empty()) return std::nullopt;
  url.host = std::move(host);
  auto port = part(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  url.port = port && port->size() <= 5 ? std::stoi(*port) : 0;
  if (url.port <= 0 || url.port > 65535) return std::nullopt;  // port 0 is nowhere to connect to
  if (auto user = part(u.get(), CURLUPART_USER)) url.userinfo = *user;
  if (auto password = part(u.get(), CURLUPART_PASSWORD)) url.userinfo += ":" + *password;
  url.target = part(u.get(), CURLUPART_PATH).value_or("/");
  if (url.target.empty() || url.target.front() != '/') url.target.insert(0, "/");
  if (auto query = part(u.get(), CURLUPART_QUERY)) url.target += "?" + *query;
  return url;
}

std::string Url::origin() const {
  bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string resolve_reference(const std::string& base, const std::string& location) {
  std::string loc(trim_view(location));
  if (has_nul(base) || has_nul(loc)) return loc;
  Curlu u(curl_url());
  if (!u || curl_url_set(u.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) return loc;
  // RFC 3986 5.2.2: an empty reference or one of only a fragment is the base
  // itself (its path and query kept). CURLU would drop the last path segment.
  if (loc.empty() || loc.front() == '#') {
    curl_url_set(u.get(), CURLUPART_FRAGMENT, nullptr, 0);
    auto same = part(u.get(), CURLUPART_URL);
    return same ? *same + loc : loc;
  }
  // The flags curl follows a redirect with: spaces and bytes above 0x7f in a
  // Location are percent-encoded (as browsers do), not refused.
  if (curl_url_set(u.get(), CURLUPART_URL, loc.c_str(), CURLU_URLENCODE | CURLU_ALLOW_SPACE) != CURLUE_OK) return loc;
  return part(u.get(), CURLUPART_URL).value_or(loc);
}

std::string percent_decode(const std::string& s) { return util::percent_decode(s); }

std::string percent_encode(std::string_view s, bool keep_slash) {
  std::string out;
  while (true) {
    auto slash = keep_slash ? s.find('/') : std::string_view::npos;
    std::string_view piece = s.substr(0, slash);
    if (!piece.empty()) {
      if (piece.size() > INT_MAX) throw std::length_error("percent_encode: text too long");
      char* escaped = curl_easy_escape(nullptr, piece.data(), static_cast<int>(piece.size()));
      if (!escaped) throw std::bad_alloc();
      out += escaped;
      curl_free(escaped);
    }
    if (slash == std::string_view::npos) return out;
    out += '/';
    s.remove_prefix(slash + 1);
  }
}

// Text, not CURLU: it must also make safe what is no URL at all (a message
// quotes whatever a server or a file gave).
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
