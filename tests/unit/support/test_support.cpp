// The shared test helpers themselves: a temp directory leaves nothing behind,
// the loopback server answers and records what it was sent.
#include <catch2/catch.hpp>
#include <filesystem>

#include "provkit/http/http.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using provkit::test::LoopbackServer;
using provkit::test::TempDir;

TEST_CASE("TempDir: unique, under TMPDIR, removed with a read-only subdirectory inside", "[support]") {
  fs::path kept;
  {
    TempDir a("support"), b("support");
    CHECK(a.path != b.path);
    CHECK(a.path.parent_path() == fs::temp_directory_path());
    CHECK_THAT(a.path.filename().string(), Catch::StartsWith("provkit-support-"));
    auto file = a.write("sub/dir/f.txt", "bytes");
    CHECK(file == a / "sub/dir/f.txt");
    CHECK(fs::file_size(file) == 5);
    fs::permissions(a / "sub", fs::perms::owner_read | fs::perms::owner_exec);
    kept = a.path;
  }
  CHECK_FALSE(fs::exists(kept));
}

TEST_CASE("LoopbackServer: answers each connection and records the request", "[support]") {
  LoopbackServer server("127.0.0.1", [](const std::string& line, const std::string&) {
    std::string body = line.substr(0, line.find(' '));
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  });
  CHECK_THAT(server.base, Catch::StartsWith("http://127.0.0.1:"));
  provkit::http::Client client{provkit::http::Options{}};
  CHECK(client.get(server.base + "/x", "hf_probe") == "GET");
  auto seen = server.seen();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].request_line == "GET /x HTTP/1.1");
  CHECK_THAT(seen[0].headers, Catch::Contains("authorization: bearer hf_probe"));
}
