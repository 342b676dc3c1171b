#pragma once
// URLs: the parts of an absolute http(s) URL and its origin (where a token may
// go), resolving a redirect's Location, redaction for messages, percent-coding.
#include <optional>
#include <string>
#include <string_view>

namespace provkit::http {

// Parts of an absolute http(s) URL, as libcurl parses it (CURLU): what parse
// accepts is what curl would fetch, and the host is the one it would connect to.
struct Url {
  std::string scheme;    // lower case
  std::string userinfo;  // user[:password], as written (still percent-encoded)
  std::string host;      // lower case; IPv6 without brackets (a zone id kept as %25id); IPv4 in dotted decimal
  int port = 0;          // explicit or the scheme default
  std::string target;    // path (dot segments removed) and query, starting with '/'

  // Nullopt unless an absolute http or https URL curl accepts, with a host and a port 1-65535.
  static std::optional<Url> parse(std::string_view text);
  // "scheme://host:port": two URLs with the same origin may share credentials.
  std::string origin() const;
};

// Resolves a Location header (or an href) against the URL it came from
// (RFC 3986 5.2: absolute, scheme-relative "//host/x", absolute-path "/x",
// relative "x", query "?q" and fragment "#f" forms), as curl follows a
// redirect: spaces and non-ASCII bytes percent-encoded. A location that cannot
// be resolved comes back as given (trimmed), which Url::parse then refuses.
std::string resolve_reference(const std::string& base, const std::string& location);

// The URL without userinfo and without query string, for messages.
std::string redact_url(const std::string& url);

// %XX sequences decoded, e.g. a wheel's file name from the last part of its
// URL ("torch-2.6.0%2Bcpu-..." is torch-2.6.0+cpu-...): util::percent_decode.
std::string percent_decode(const std::string& s);

// Every byte but ALPHA, DIGIT and "-._~" as %XX (upper-case hex); with
// keep_slash, '/' stays as it is (a path of several segments).
std::string percent_encode(std::string_view s, bool keep_slash = false);

}  // namespace provkit::http
