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

TEST_CASE("glibc: zig is told the host's glibc, and given gcc's system dirs", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  ctx.system_include_dirs = {"/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include"};
  ctx.system_library_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib"};
  ctx.library_path = {"/lp"};
  auto out = translated({"-O2", "a.c", "-I/mine", "-L/mine"}, ctx);
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
    out = translated(args, ctx);
    CHECK(std::find(out.begin(), out.end(), "-idirafter") == out.end());
  }
}

TEST_CASE("glibc: a caller's own target (or -m32) is left alone, and so is a host without glibc", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  for (const Args& args : {Args{"-target", "aarch64-linux-gnu.2.28", "a.c"}, Args{"--target=x86_64-linux-musl", "a.c"},
                           Args{"-m32", "a.c"}}) {
    auto out = translated(args, sys.context());
    CHECK(std::count(out.begin(), out.end(), "-target") == (args[0] == "-target" ? 1 : 0));
    CHECK(std::find(out.begin(), out.end(), "x86_64-linux-gnu.2.36") == out.end());
    CHECK(std::find(out.begin(), out.end(), "-march=native") == out.end());
  }
  CHECK(sys.glibc_reads == 0);
  sys.glibc.reset();
  auto out = translated({"a.c"}, sys.context());
  CHECK(std::find(out.begin(), out.end(), "-target") == out.end());
  CHECK(sys.glibc_reads == 1);
}

TEST_CASE("glibc: the target names the host's architecture, so zig's clang reads it for stdin too", "[ccshim]") {
  // zig 0.11 hands `-target native-native-...` to clang unresolved when the
  // input is `-` (meson's `cc -E -dM -`): "unknown target triple".
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  auto out = translated({"-E", "-dM", "-"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 3) ==
        Args{"-target", "x86_64-linux-gnu.2.36", "-fno-sanitize=all"});  // gcc's baseline CPU
  ctx.host = aarch64;
  out = translated({"-E", "-dM", "-"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 2) == Args{"-target", "aarch64-linux-gnu.2.36"});
  // The caller's CPU replaces the native one.
  ctx.host = x86_64;
  out = translated({"-march=x86-64", "a.c"}, ctx);
  CHECK(std::count(out.begin(), out.end(), "-march=native") == 0);
  CHECK(std::count(out.begin(), out.end(), "-march=x86_64") == 1);
}
