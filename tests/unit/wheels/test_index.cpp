#include <catch2/catch.hpp>

#include "provkit/wheels/index.hpp"

using namespace provkit::wheels;

TEST_CASE("PEP 503 pages: anchors, hash fragments, relative links, non-wheels skipped", "[envbuild]") {
  const std::string H(64, 'c');
  std::string html =
      "<!DOCTYPE html><html><body>\n"
      "<a href=\"../../files/demo-1.0-py3-none-any.whl#sha256=" +
      H +
      "\" data-requires-python=\"&gt;=3.8\">demo-1.0-py3-none-any.whl</a><br/>\n"
      "<a href='https://cdn.example/demo-1.0%2Blocal-cp311-cp311-linux_x86_64.whl?x=1&amp;y=2'>x</a>\n"
      "<a href=\"/files/demo-1.0.tar.gz#sha256=" +
      H +
      "\">demo-1.0.tar.gz</a>\n"
      "<abbr href=\"nope.whl\">not an anchor</abbr></body></html>";
  auto c = parse_simple_page(html, "text/html", "https://idx.example/simple/demo/");
  REQUIRE(c.size() == 2);
  CHECK(c[0].url == "https://idx.example/files/demo-1.0-py3-none-any.whl");
  CHECK(c[0].sha256 == H);
  CHECK(c[1].wheel.version == "1.0+local");
  CHECK(c[1].url == "https://cdn.example/demo-1.0%2Blocal-cp311-cp311-linux_x86_64.whl?x=1&y=2");
  CHECK(c[1].sha256.empty());
}

TEST_CASE("PEP 691 JSON pages: filename, url, hashes, size", "[envbuild]") {
  std::string json = R"({"meta": {"api-version": "1.1"}, "name": "demo", "files": [
      {"filename": "demo-1.0-py3-none-any.whl", "url": "../../files/demo-1.0-py3-none-any.whl",
       "hashes": {"sha256": "ab"}, "size": 1234, "yanked": false},
      {"filename": "demo-1.0.tar.gz", "url": "x", "hashes": {}}]})";
  auto c = parse_simple_page(json, "application/vnd.pypi.simple.v1+json", "http://127.0.0.1:8000/simple/demo/");
  REQUIRE(c.size() == 1);
  CHECK(c[0].url == "http://127.0.0.1:8000/files/demo-1.0-py3-none-any.whl");
  CHECK(c[0].sha256 == "ab");
  CHECK(c[0].size == 1234u);
  CHECK_THROWS(parse_simple_page("{not json", "application/vnd.pypi.simple.v1+json", "http://x/simple/demo/"));
}
