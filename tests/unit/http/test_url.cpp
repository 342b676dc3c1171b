// URLs as libcurl's URL API reads them (http_url.cpp): where CURLU differs from
// the hand parser it replaced, the cases that show which way was chosen.
#include <catch2/catch.hpp>

#include "provkit/http/url.hpp"

using namespace provkit::http;

TEST_CASE("a URL is what curl would fetch: its host the one curl connects to", "[http][url]") {
  // IPv4 in the forms curl (and browsers) read as numbers: the same origin as dotted decimal.
  CHECK(Url::parse("http://0x7f.1:5/")->origin() == "http://127.0.0.1:5");
  CHECK(Url::parse("http://127.1:5/")->origin() == Url::parse("http://127.0.0.1:5/x")->origin());
  // Two '@': curl refuses the host "b@c" (the hand parser took "c").
  CHECK_FALSE(Url::parse("http://a@b@c/"));
  // No raw space or line break: curl would refuse it as CURLOPT_URL.
  CHECK_FALSE(Url::parse("http://h/a b"));
  CHECK_FALSE(Url::parse("http://h/a\nb"));
  CHECK_FALSE(Url::parse(std::string("http://h/a\0b", 12)));
  CHECK_FALSE(Url::parse("http://h h/"));
  CHECK_FALSE(Url::parse("http://h:0/"));
  // The path as sent: dot segments removed.
  CHECK(Url::parse("http://h/a/./b/../c?q=1")->target == "/a/c?q=1");
  CHECK(Url::parse("http://h?x")->target == "/?x");
  CHECK(Url::parse("http://h")->target == "/");
  CHECK(Url::parse("http://[::1]/")->origin() == "http://[::1]:80");
  CHECK(Url::parse("http://h:/x")->port == 80);
  CHECK(Url::parse("http://u:@h/")->userinfo == "u:");
}

TEST_CASE("a Location resolves as curl follows it, per RFC 3986", "[http][url]") {
  std::string base = "http://hub:1/org/name/resolve/main/a/b.json?x=1#top";
  // Empty and fragment-only references are the base document itself.
  CHECK(resolve_reference(base, "") == "http://hub:1/org/name/resolve/main/a/b.json?x=1");
  CHECK(resolve_reference(base, "#f") == "http://hub:1/org/name/resolve/main/a/b.json?x=1#f");
  // Spaces and non-ASCII bytes are percent-encoded, as curl and browsers send them.
  CHECK(resolve_reference(base, "a b.json") == "http://hub:1/org/name/resolve/main/a/a%20b.json");
  CHECK(resolve_reference(base, "/caf\xc3\xa9") == "http://hub:1/caf%c3%a9");
  CHECK(Url::parse(resolve_reference(base, "/x y")));
  // Existing escapes stay as they are.
  CHECK(resolve_reference(base, "/c/a%2Fb%20c") == "http://hub:1/c/a%2Fb%20c");
  CHECK(resolve_reference(base, "  ../x  ") == "http://hub:1/org/name/resolve/main/x");
  CHECK(resolve_reference(base, "http:///cdn/x") == "http://cdn/x");
  // What cannot be resolved comes back as given, and is no URL.
  CHECK(resolve_reference(base, "mailto:x") == "mailto:x");
  CHECK_FALSE(Url::parse(resolve_reference(base, "http://a@b@c/")));
  CHECK(resolve_reference("not a url", "/x") == "/x");
}

TEST_CASE("percent-encoding and decoding", "[http][url]") {
  CHECK(percent_encode("refs/pr/1") == "refs%2Fpr%2F1");
  CHECK(percent_encode("dir/a b+c#?.bin", true) == "dir/a%20b%2Bc%23%3F.bin");
  CHECK(percent_encode("/a//b/", true) == "/a//b/");
  CHECK(percent_encode("caf\xc3\xa9~._-") == "caf%C3%A9~._-");
  CHECK(percent_encode("") == "");
  CHECK(percent_decode("torch-2.6.0%2Bcpu%zz%4") == "torch-2.6.0+cpu%zz%4");
  CHECK(percent_decode("a%00b") == std::string("a\0b", 3));
  CHECK(percent_decode("") == "");
}
