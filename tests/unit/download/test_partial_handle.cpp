// A job's blob lock and partial file's descriptor: one holder at a time,
// released on close; the partial file opened below the root, never through a link.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "download/partial_handle.hpp"
#include "provkit/error.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

TEST_CASE("PartialHandle: the blob lock has one holder at a time, released on close", "[download][partial]") {
  test::TempDir dir("partial-handle");
  util::Root root(dir.path);
  download::PartialHandle a(root, dir / "blobs/x.partial", dir / "locks/x.lock");
  download::PartialHandle b(root, dir / "blobs/x.partial", dir / "locks/x.lock");
  CHECK(a.lock(false));
  CHECK_FALSE(b.lock(false));
  a.close();
  CHECK(b.lock(false));
  // No lock path: nothing to hold.
  download::PartialHandle none(root, dir / "blobs/y.partial", {});
  CHECK(none.lock(false));
}

TEST_CASE("PartialHandle: opens or creates the partial file, its length, truncates it", "[download][partial]") {
  test::TempDir dir("partial-handle");
  util::Root root(dir.path);
  download::PartialHandle h(root, dir / "blobs/x.partial", dir / "x.lock");
  CHECK(h.open() == 0);
  CHECK(fs::is_regular_file(dir / "blobs/x.partial"));
  REQUIRE(::write(h.fd(), "hello", 5) == 5);
  h.close();
  CHECK(h.fd() < 0);
  CHECK(h.open() == 5);
  h.truncate(2);
  CHECK(fs::file_size(dir / "blobs/x.partial") == 2);
}

TEST_CASE("PartialHandle: a link planted at the partial file's name is refused, its target untouched",
          "[download][partial]") {
  test::TempDir dir("partial-handle");
  util::Root root(dir.path / "cache");
  fs::path outside = dir.write("outside", "keep me");
  fs::create_directories(dir / "cache/blobs");
  fs::create_symlink(outside, dir / "cache/blobs/x.partial");
  download::PartialHandle h(root, dir / "cache/blobs/x.partial", {});
  try {
    h.open();
    FAIL("opened through a link");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::check_failed);
  }
  std::ifstream in(outside);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(s == "keep me");
}
