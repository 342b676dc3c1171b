// provkit::util fs: files by the user's path (bounded, regular only; heads and ranges), atomic writes, sibling names.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "support/reason_of.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit;

TEST_CASE("read_file and the file hashers take regular files only, bounded", "[util][fs]") {
  test::TempDir tmp("beneath-read");
  REQUIRE(::mkfifo((tmp / "fifo").c_str(), 0644) == 0);
  tmp.write("file", "abc");
  fs::create_symlink(tmp / "file", tmp / "link");
  CHECK(util::read_file(tmp / "link") == "abc");  // a path the user named: its links are theirs
  CHECK(test::reason_of([&] { util::read_file(tmp / "fifo"); }) == util::FileRefusal::not_regular);
  CHECK(test::reason_of([&] { util::read_file("/dev/zero"); }) == util::FileRefusal::not_regular);
  CHECK(test::reason_of([&] { util::read_file(tmp / "file", 2); }) == util::FileRefusal::too_large);
  CHECK(util::read_file(tmp / "file", 3) == "abc");
  CHECK(test::reason_of([&] { util::sha256_file(tmp / "fifo"); }) == util::FileRefusal::not_regular);
  CHECK(test::reason_of([&] { util::sha256_file("/dev/zero"); }) == util::FileRefusal::not_regular);
}

TEST_CASE("read_file_head and read_file_range: a head or a range of a regular file, never of a FIFO or device",
          "[util][fs]") {
  test::TempDir tmp("fs-head");
  REQUIRE(::mkfifo((tmp / "fifo").c_str(), 0644) == 0);  // no writer: an open that waits would never return
  tmp.write("file", "line one\nline two\n");
  fs::create_symlink(tmp / "file", tmp / "link");
  CHECK(util::read_file_head(tmp / "link", 4) == "line");                     // the head only, however long the file
  CHECK(util::read_file_head(tmp / "file", 4096) == "line one\nline two\n");  // shorter: all of it
  CHECK(test::reason_of([&] { util::read_file_head(tmp / "fifo", 4096); }) == util::FileRefusal::not_regular);
  CHECK(test::reason_of([&] { util::read_file_head("/dev/zero", 4096); }) == util::FileRefusal::not_regular);
  CHECK(util::read_file_range(tmp / "file", 5, 3) == "one");
  CHECK(test::reason_of([&] { util::read_file_range(tmp / "file", 10, 100); }) == util::FileRefusal::short_file);
  CHECK(test::reason_of([&] { util::read_file_range(tmp / "fifo", 0, 1); }) == util::FileRefusal::not_regular);
  CHECK(test::reason_of([&] { util::read_file_range(tmp / "absent", 0, 1); }) == util::FileRefusal::not_found);
}

TEST_CASE("write_file_atomic replaces a planted link at the target, never writes through it", "[util][fs]") {
  test::TempDir tmp("fs-atomic");
  tmp.write("outside", "keep");
  fs::create_symlink(tmp / "outside", tmp / "target");
  util::write_file_atomic(tmp / "target", "new");
  CHECK(!fs::is_symlink(tmp / "target"));
  std::ifstream in(tmp / "outside");
  std::string s((std::istreambuf_iterator<char>(in)), {});
  CHECK(s == "keep");
  util::write_file_atomic(tmp / "sub/dir/file", "x");  // parents made
  CHECK(fs::file_size(tmp / "sub/dir/file") == 1);
}

TEST_CASE("path_with_suffix keeps names within NAME_MAX and never cuts a UTF-8 character", "[util][fs]") {
  CHECK(util::path_with_suffix("/a/b", ".lock") == "/a/b.lock");
  std::string longname;
  for (int i = 0; i < 127; ++i) longname += "\xc3\xa9";  // 254 bytes of é
  auto p = util::path_with_suffix(fs::path("/d") / longname, ".provkit-partial");
  std::string name = p.filename().string();
  CHECK(name.size() <= 255);
  CHECK(name.size() > 200);
  CHECK(name.ends_with(".provkit-partial"));
  auto tilde = name.find('~');
  REQUIRE(tilde != std::string::npos);
  CHECK(tilde % 2 == 0);  // whole two-byte characters before the tag
  CHECK(util::path_with_suffix(fs::path("/d") / longname, ".x") !=
        util::path_with_suffix(fs::path("/d") / (longname + "z"), ".x"));
}

TEST_CASE("rename_durable names both paths when it fails", "[util][fs]") {
  test::TempDir tmp("fs-rename");
  try {
    util::rename_durable(tmp / "missing", tmp / "to");
    FAIL("renamed nothing");
  } catch (const Error& e) {
    CHECK(e.is(util::FileRefusal::not_found));
    CHECK(e.code() == ExitCode::check_failed);
    CHECK(std::string(e.what()).find("missing") != std::string::npos);
  }
}

TEST_CASE("process_umask reads the umask without changing it", "[util]") {
  const mode_t before = ::umask(027);
  CHECK(provkit::util::process_umask() == 027);
  CHECK(::umask(before) == 027);  // still what the test set
}
