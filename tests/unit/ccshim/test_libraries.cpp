// The libraries GNU ld would link where lld would take another (ccshim/libraries.hpp), asked directly; the
// translation's use of them (-l:NAME, -lNAME) is in test_translate.cpp.
#include <elf.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ccshim/ccshim.hpp"

#include "ccshim/fake_system.hpp"

using namespace provkit;
using namespace ccshim_test;
using Dirs = std::vector<fs::path>;

TEST_CASE("libraries: an exact name is looked for in -L dirs, LIBRARY_PATH, ld.so.cache, then the default dirs",
          "[ccshim]") {
  FakeSystem sys;
  auto ctx = sys.context();
  ctx.library_path = {"/lp"};
  sys.elves["/usr/lib/libx.so.1"] = x86_64;  // a default dir
  CHECK(ccshim::resolve_exact_library("libx.so.1", {"/l"}, x86_64, ctx) == fs::path("/usr/lib/libx.so.1"));
  sys.cache.push_back({"libx.so.1", "/cache/libx.so.1"});
  sys.elves["/cache/libx.so.1"] = x86_64;
  CHECK(ccshim::resolve_exact_library("libx.so.1", {"/l"}, x86_64, ctx) == fs::path("/cache/libx.so.1"));
  sys.elves["/lp/libx.so.1"] = x86_64;
  CHECK(ccshim::resolve_exact_library("libx.so.1", {"/l"}, x86_64, ctx) == fs::path("/lp/libx.so.1"));
  sys.elves["/l/libx.so.1"] = x86_64;
  CHECK(ccshim::resolve_exact_library("libx.so.1", {"/l"}, x86_64, ctx) == fs::path("/l/libx.so.1"));
  // Of another machine, or no ELF at all: not the target's, looked past.
  sys.elves["/l/libx.so.1"] = aarch64;
  CHECK(ccshim::resolve_exact_library("libx.so.1", {"/l"}, x86_64, ctx) == fs::path("/lp/libx.so.1"));
  CHECK(ccshim::resolve_exact_library("libx.so.1", {"/l"}, i386, ctx) == std::nullopt);
}

TEST_CASE("libraries: -lNAME past a file of another class, only where GNU ld would skip it", "[ccshim]") {
  FakeSystem sys;
  auto ctx = sys.context();
  ctx.system_library_dirs = {"/sys"};
  // Nothing skipped: zig finds what ld finds.
  sys.elves["/a/libfoo.so"] = x86_64;
  CHECK(ccshim::library_past_incompatible("foo", {"/a"}, false, x86_64, ctx) == std::nullopt);
  // The 32-bit one first: ld skips it ("skipping incompatible") and takes the next of the target.
  sys.elves["/a/libfoo.so"] = i386;
  sys.elves["/sys/libfoo.so"] = x86_64;
  CHECK(ccshim::library_past_incompatible("foo", {"/a"}, false, x86_64, ctx) == fs::path("/sys/libfoo.so"));
  // An archive or a linker script after the skipped one is what ld takes.
  sys.other_files.insert("/a/libfoo.a");
  CHECK(ccshim::library_past_incompatible("foo", {"/a"}, false, x86_64, ctx) == fs::path("/a/libfoo.a"));
  // -Bstatic: only libfoo.a counts, so nothing is skipped.
  CHECK(ccshim::library_past_incompatible("foo", {"/a"}, true, x86_64, ctx) == std::nullopt);
  // Nothing of the target anywhere: zig's own error stays.
  sys.other_files.clear();
  sys.elves.erase("/sys/libfoo.so");
  CHECK(ccshim::library_past_incompatible("foo", {"/a"}, false, x86_64, ctx) == std::nullopt);
}
