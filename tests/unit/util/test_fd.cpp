// provkit::util fd: the owning Fd and the reads and writes every file goes through.
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
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit;

TEST_CASE("Fd owns its descriptor: closed when it goes, moved, never twice", "[util][fd]") {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(raw >= 0);
  {
    util::Fd a(raw);
    util::Fd b(std::move(a));
    CHECK(!a);
    CHECK(b.get() == raw);
    util::Fd c;
    c = std::move(b);
    CHECK(c.get() == raw);
    CHECK(::fcntl(raw, F_GETFD) >= 0);
  }
  CHECK(::fcntl(raw, F_GETFD) == -1);  // closed by the last owner
  util::Fd d(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  CHECK(d.close() == 0);
  CHECK(!d);
  CHECK(d.close() == 0);
}

TEST_CASE("write_all and read_bounded: whole writes, reads refused past their bound", "[util][fd]") {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  util::Fd r(p[0]), w(p[1]);
  CHECK(util::write_all(w.get(), "twelve bytes") == 0);
  w.reset();
  CHECK(util::read_bounded(r.get(), 12, "pipe") == "twelve bytes");
  util::Fd zero(::open("/dev/zero", O_RDONLY | O_CLOEXEC));
  REQUIRE(zero);
  try {
    util::read_bounded(zero.get(), 4096, "/dev/zero");
    FAIL("an endless file was read");
  } catch (const Error& e) {
    CHECK(e.is(util::FileRefusal::too_large));
    CHECK(e.reason().name() == "check_failed");
  }
  util::Fd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  CHECK(util::write_all(null.get(), std::string(1 << 20, 'x')) == 0);
  util::Fd ro(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  CHECK(util::write_all(ro.get(), "x") == EBADF);
}

TEST_CASE("read_blocks hands every block to the sink and counts them", "[util][fd]") {
  test::TempDir tmp("fd-blocks");
  std::string content(10000, 'a');
  tmp.write("f", content);
  util::Fd f(::open((tmp / "f").c_str(), O_RDONLY | O_CLOEXEC));
  std::vector<char> buf(4096);
  std::string got;
  int calls = 0;
  auto n = util::read_blocks(
      f.get(), buf,
      [&](const char* d, std::size_t k) {
        got.append(d, k);
        ++calls;
      },
      "f");
  CHECK(n == 10000);
  CHECK(got == content);
  CHECK(calls >= 3);
}
