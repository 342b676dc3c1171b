#pragma once
// URLs: the parts of an absolute http(s) URL and its origin (where a token may
// go), resolving a redirect's Location, redaction for messages, percent-coding.
#include <optional>
#include <string>
#include <string_view>

namespace provkit::http {

// Parts of an absolute http(s) URL.
struct Url {
  std::string scheme;  // lower case
  std::string userinfo;
  std::string authority;  // as written: [userinfo@]host[:port]
  std::string host;    // lower case; IPv6 without brackets
  int port = 0;        // explicit or the scheme default
  std::string target;  // path and query, starting with '/'

  static std::optional<Url> parse(std::string_view text);
  // "scheme://host:port": two URLs with the same origin may share credentials.
  std::string origin() const;
};

// Resolves a Location header against the URL it came from (absolute,
// scheme-relative "//host/x", absolute-path "/x" and relative "x" forms).
std::string resolve_reference(const std::string& base, const std::string& location);

// The URL without userinfo and without query string, for messages.
std::string redact_url(const std::string& url);

// %XX sequences decoded, e.g. a wheel's file name from the last part of its
// URL ("torch-2.6.0%2Bcpu-..." is torch-2.6.0+cpu-...).
std::string percent_decode(const std::string& s);

}  // namespace provkit::http
