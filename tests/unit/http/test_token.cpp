// Where a bearer token may go: only to the origin (scheme, host, port) it was issued for.
#include <catch2/catch.hpp>

#include "provkit/http/token.hpp"

using provkit::http::same_origin;
using provkit::http::token_allowed;

TEST_CASE("token: goes to any path of its own origin, the default port and the host's case read as curl reads them",
          "[http][token]") {
  const char* hub = "https://huggingface.co";
  CHECK(token_allowed(hub, "https://huggingface.co/org/model/resolve/main/config.json"));
  CHECK(token_allowed(hub, "https://huggingface.co:443/api/models/org/model"));
  CHECK(token_allowed(hub, "https://HuggingFace.CO/api/whoami-v2"));
  CHECK(token_allowed("http://127.0.0.1:8080/", "http://127.0.0.1:8080/a?b=c"));
}

TEST_CASE("token: never to another scheme, host or port", "[http][token]") {
  const char* hub = "https://huggingface.co";
  CHECK_FALSE(token_allowed(hub, "http://huggingface.co/org/model"));  // the same host in clear text
  CHECK_FALSE(token_allowed(hub, "https://cdn-lfs.huggingface.co/repos/x"));
  CHECK_FALSE(token_allowed(hub, "https://huggingface.co.evil.example/x"));
  CHECK_FALSE(token_allowed(hub, "https://huggingface.co@evil.example/x"));  // userinfo, then the real host
  CHECK_FALSE(token_allowed(hub, "https://huggingface.co:8443/x"));
  CHECK_FALSE(token_allowed("http://127.0.0.1:8080", "http://127.0.0.2:8080/"));
}

TEST_CASE("token: never when either URL does not parse", "[http][token]") {
  CHECK_FALSE(token_allowed("https://huggingface.co", "huggingface.co/org/model"));  // no scheme
  CHECK_FALSE(token_allowed("https://huggingface.co", "ftp://huggingface.co/x"));
  CHECK_FALSE(token_allowed("", "https://huggingface.co/x"));
  CHECK_FALSE(same_origin("https://huggingface.co", ""));
  CHECK(same_origin("https://a.example/x", "https://a.example/y"));
  CHECK(same_origin("https://a.example/y", "https://a.example/x"));
}
