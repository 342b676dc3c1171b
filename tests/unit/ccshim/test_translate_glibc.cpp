// cc-shim's translation: the glibc target zig is given (the host's glibc, never newer than zig can build
// stubs for) and the host's own libc when its development files are there.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ccshim/ccshim.hpp"
#include "provkit/error.hpp"

#include "ccshim/fake_system.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace ccshim_test;
using ccshim::translate;

TEST_CASE("glibc: zig is told the host's glibc, and given gcc's system dirs", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  ctx.system_include_dirs = {"/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include"};
  ctx.system_library_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib"};
  ctx.library_path = {"/lp"};
  auto out = translate({"-O2", "a.c", "-I/mine", "-L/mine"}, ctx);
  REQUIRE(out.size() > 4);
  CHECK(Args(out.begin(), out.begin() + 3) ==
        Args{"-target", "x86_64-linux-gnu.2.36", "-fno-sanitize=all"});  // zig's baseline CPU: gcc's
  // gcc's order: the command line's -I/-L first, then LIBRARY_PATH, then the system dirs.
  CHECK(Args(out.end() - 9, out.end()) == Args{"-idirafter", "/usr/local/include", "-idirafter",
                                               "/usr/include/x86_64-linux-gnu", "-idirafter", "/usr/include", "-L/lp",
                                               "-L/lib/x86_64-linux-gnu", "-L/usr/lib"});
  CHECK(sys.glibc_reads == 1);
  // -nostdinc: no system headers, as in gcc; a sysroot has headers of its own.
  for (const Args& args : {Args{"-nostdinc", "a.c"}, Args{"--sysroot=/sr", "a.c"}, Args{"--sysroot", "/sr", "a.c"}}) {
    out = translate(args, ctx);
    CHECK(std::find(out.begin(), out.end(), "-idirafter") == out.end());
  }
}

TEST_CASE("glibc: a caller's own target (or -m32) is left alone, and so is a host without glibc", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  for (const Args& args : {Args{"-target", "aarch64-linux-gnu.2.28", "a.c"}, Args{"--target=x86_64-linux-musl", "a.c"},
                           Args{"-m32", "a.c"}}) {
    auto out = translate(args, sys.context());
    CHECK(std::count(out.begin(), out.end(), "-target") == (args[0] == "-target" ? 1 : 0));
    CHECK(std::find(out.begin(), out.end(), "x86_64-linux-gnu.2.36") == out.end());
    CHECK(std::find(out.begin(), out.end(), "-march=native") == out.end());
  }
  CHECK(sys.glibc_reads == 0);
  sys.glibc.reset();
  auto out = translate({"a.c"}, sys.context());
  CHECK(std::find(out.begin(), out.end(), "-target") == out.end());
  CHECK(sys.glibc_reads == 1);
}

TEST_CASE("glibc: the target names the host's architecture, so zig's clang reads it for stdin too", "[ccshim]") {
  // zig 0.11 hands `-target native-native-...` to clang unresolved when the
  // input is `-` (meson's `cc -E -dM -`): "unknown target triple".
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  auto out = translate({"-E", "-dM", "-"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 3) ==
        Args{"-target", "x86_64-linux-gnu.2.36", "-fno-sanitize=all"});  // gcc's baseline CPU
  ctx.host = aarch64;
  out = translate({"-E", "-dM", "-"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 2) == Args{"-target", "aarch64-linux-gnu.2.36"});
  // The caller's CPU replaces the native one.
  ctx.host = x86_64;
  out = translate({"-march=x86-64", "a.c"}, ctx);
  CHECK(std::count(out.begin(), out.end(), "-march=native") == 0);
  CHECK(std::count(out.begin(), out.end(), "-march=x86_64") == 1);
}

TEST_CASE("glibc: never newer than zig can build stubs for (a host newer than zig)", "[ccshim]") {
  CHECK(ccshim::glibc_zig_can_build("2.39", "2.34") == "2.34");
  CHECK(ccshim::glibc_zig_can_build("2.36", "2.34") == "2.34");
  CHECK(ccshim::glibc_zig_can_build("2.34", "2.34") == "2.34");
  CHECK(ccshim::glibc_zig_can_build("2.31", "2.34") == "2.31");
  CHECK(ccshim::glibc_zig_can_build("2.39", std::nullopt) == "2.39");  // zig's list unknown: as before
  CHECK(ccshim::glibc_zig_can_build("2.39", "garbage") == "2.39");
  FakeSystem sys;
  sys.glibc = "2.39";  // Ubuntu 24.04
  auto ctx = sys.context();
  int zig_reads = 0;
  ctx.zig_newest_glibc = [&]() -> std::optional<std::string> {
    ++zig_reads;
    return "2.34";
  };
  auto out = translate({"launcher.c", "-shared", "-fPIC", "-o", "l.so"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 2) == Args{"-target", "x86_64-linux-gnu.2.34"});
  CHECK(zig_reads == 1);
}

TEST_CASE("glibc: zig links against the host's own libc when its development files are there", "[ccshim]") {
  // zig 0.11's glibc stubs stop at 2.34: pidfd_open and arc4random (2.36)
  // are declared by the headers but do not link against them.
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  CHECK(ccshim::zig_libc_file({"a.c"}, ctx) == std::nullopt);  // no libc6-dev
  ctx.host_libc = ccshim::HostLibc{"/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"};
  CHECK(ccshim::zig_libc_file({"a.c", "-o", "a"}, ctx) ==
        std::optional<std::string>("include_dir=/usr/include\n"
                                   "sys_include_dir=/usr/include/x86_64-linux-gnu\n"
                                   "crt_dir=/usr/lib/x86_64-linux-gnu\n"
                                   "msvc_lib_dir=\nkernel32_lib_dir=\ngcc_dir=\n"));
  // Not when the shim sets no glibc target, nor without the system headers.
  for (const Args& args : {Args{"-m32", "a.c"}, Args{"-target", "aarch64-linux-gnu", "a.c"}, Args{"-nostdinc", "a.c"},
                           Args{"--sysroot=/sr", "a.c"}})
    CHECK(ccshim::zig_libc_file(args, ctx) == std::nullopt);
  sys.glibc.reset();
  CHECK(ccshim::zig_libc_file({"a.c"}, ctx) == std::nullopt);
}
