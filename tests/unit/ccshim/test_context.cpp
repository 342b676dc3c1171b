// cc-shim's search context: the host's glibc read from its libc.so.6, its libc development files, each
// file read once per run.
#include <gnu/libc-version.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "ccshim/ccshim.hpp"
#include "provkit/error.hpp"

#include "ccshim/fake_system.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace ccshim_test;

TEST_CASE("response files: each file is read once per run, a pipe's arguments kept for every later use", "[ccshim]") {
  int reads = 0;
  auto once = ccshim::read_each_file_once([&](const fs::path& p) -> std::optional<std::string> {
    ++reads;
    if (p == "gone") return std::nullopt;
    return reads == 1 ? std::optional<std::string>("-DNDEBUG") : std::nullopt;  // a pipe: empty after one read
  });
  CHECK(once("/dev/fd/63") == std::optional<std::string>("-DNDEBUG"));
  CHECK(once("/dev/fd/63") == std::optional<std::string>("-DNDEBUG"));
  CHECK(reads == 1);
  CHECK_FALSE(once("gone"));
  CHECK_FALSE(once("gone"));
  CHECK(reads == 2);
  // The system context's reader is memoised: a real pipe read through every expansion plan() does.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::write(fds[1], "-DNDEBUG\n", 9) == 9);
  ::close(fds[1]);
  auto ctx = ccshim::system_context();
  const std::string at = "@/proc/self/fd/" + std::to_string(fds[0]);
  for (int i = 0; i < 4; ++i) CHECK(ccshim::expand_response_files({at, "x.c"}, ctx) == Args{"-DNDEBUG", "x.c"});
  ::close(fds[0]);
}

TEST_CASE("glibc: the version comes from the host's libc.so.6 itself", "[ccshim]") {
  auto ctx = ccshim::system_context();
  auto version = ctx.glibc_version();
  REQUIRE(version.has_value());
  // This test runs on glibc: the same release the test binary itself runs on.
  CHECK(*version == std::string(gnu_get_libc_version()).substr(0, version->size()));
}

TEST_CASE("glibc: the stand-in of a glibc 2.39 libc.so.6 read through the real path", "[ccshim]") {
  // Built by tests/CMakeLists.txt with GLIBC_2.2.5 ... GLIBC_2.39 version definitions.
  const fs::path dir = PROVKIT_BUILD_DIR "/tests/glibc239";
  REQUIRE(fs::is_regular_file(dir / "libc.so.6"));
  auto version = ccshim::host_glibc_version(x86_64, {dir});
  REQUIRE(version == std::optional<std::string>("2.39"));
  CHECK(ccshim::glibc_zig_can_build(*version, "2.34") == "2.34");
}

TEST_CASE("glibc: the system context finds this host's libc development files", "[ccshim]") {
  // This Debian host has libc6-dev (gcc depends on it).
  auto ctx = ccshim::system_context();
  REQUIRE(ctx.host_libc.has_value());
  CHECK(fs::is_regular_file(ctx.host_libc->crt_dir / "crt1.o"));
  CHECK(fs::is_regular_file(ctx.host_libc->include_dir / "stdlib.h"));
}
