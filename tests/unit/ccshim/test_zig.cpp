// cc-shim's zig: where it is found, the newest glibc it can build, how the shim was called.
#include <sys/stat.h>
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

TEST_CASE("glibc: zig's newest buildable glibc comes from its abilists", "[ccshim]") {
  test::TempDir tmp("ccshim-abilists");
  auto root = tmp.path / "zig-linux-x64";
  fs::create_directories(root / "lib" / "libc" / "glibc");
  { std::ofstream(root / "zig") << "#!/bin/sh\n"; }
  auto write_abilists = [&](const std::string& bytes) {
    std::ofstream(root / "lib" / "libc" / "glibc" / "abilists", std::ios::binary) << bytes;
  };
  // 2 libraries, then 3 versions (2.2.5, 2.34.0, 2.17.0), then the rest of the file.
  write_abilists(std::string("\x02m\0c\0\x03\x02\x02\x05\x02\x22\x00\x02\x11\x00rest", 19));
  CHECK(ccshim::newest_glibc_zig_builds(root / "zig") == std::optional<std::string>("2.34"));
  // Through a link, as a bin/zig link to the unpacked archive.
  fs::create_directories(tmp.path / "bin");
  fs::create_symlink(root / "zig", tmp.path / "bin" / "zig");
  CHECK(ccshim::newest_glibc_zig_builds(tmp.path / "bin" / "zig") == std::optional<std::string>("2.34"));
  // Truncated inside the versions, or no file: unknown.
  write_abilists(std::string("\x02m\0c\0\x03\x02\x02\x05\x02", 10));
  CHECK(ccshim::newest_glibc_zig_builds(root / "zig") == std::nullopt);
  fs::remove(root / "lib" / "libc" / "glibc" / "abilists");
  CHECK(ccshim::newest_glibc_zig_builds(root / "zig") == std::nullopt);
}

TEST_CASE("locate_zig: CC_SHIM_ZIG then PATH then a ziglang package next to the shim", "[ccshim]") {
  provkit::test::TempDir tmp("ccshim-zig");
  const fs::path& root = tmp.path;
  auto make_exe = [](const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n";
    fs::permissions(p, fs::perms(0755));
  };
  auto self = root / "venv/bin/cc-shim";
  make_exe(self);
  make_exe(root / "venv/lib/python3.11/site-packages/ziglang/zig");
  make_exe(root / "onpath/zig");
  std::ofstream((fs::create_directories(root / "noexec"), root / "noexec/zig")) << "not executable";

  ccshim::ZigQuery q;
  q.self_exe = self;
  q.shim_dirs = {root / "venv/bin"};

  SECTION("CC_SHIM_ZIG wins and is the only candidate") {
    q.cc_shim_zig = (root / "onpath/zig").string();
    q.path_env = (root / "elsewhere").string();
    auto r = ccshim::locate_zig(q);
    REQUIRE(r.zig);
    CHECK(*r.zig == root / "onpath/zig");
    CHECK(r.how == "CC_SHIM_ZIG");
    q.cc_shim_zig = (root / "noexec/zig").string();
    r = ccshim::locate_zig(q);
    CHECK(!r.zig);
    CHECK(r.looked == Args{"CC_SHIM_ZIG=" + q.cc_shim_zig + " (not an executable file)"});
  }
  SECTION("CC_SHIM_ZIG naming the shim itself is refused") {
    q.cc_shim_zig = self.string();
    auto r = ccshim::locate_zig(q);
    CHECK(!r.zig);
    CHECK(r.looked[0].find("cc-shim itself") != std::string::npos);
  }
  SECTION("zig on PATH, skipping non-executables and the shim itself") {
    fs::create_directories(root / "selfdir");
    fs::create_symlink(self, root / "selfdir/zig");
    q.path_env = (root / "noexec").string() + ":" + (root / "selfdir").string() + ":" + (root / "onpath").string();
    auto r = ccshim::locate_zig(q);
    REQUIRE(r.zig);
    CHECK(*r.zig == root / "onpath/zig");
    CHECK(r.how == "PATH");
  }
  SECTION("the ziglang package of the venv the shim is in") {
    q.path_env = (root / "noexec").string();
    auto r = ccshim::locate_zig(q);
    REQUIRE(r.zig);
    CHECK(*r.zig == root / "venv/lib/python3.11/site-packages/ziglang/zig");
    CHECK(r.how == "ziglang package");
  }
  SECTION("nothing found: every place looked at is listed") {
    fs::remove_all(root / "venv/lib");
    q.path_env = "/nonexistent";
    auto r = ccshim::locate_zig(q);
    CHECK(!r.zig);
    CHECK(r.looked == Args{"zig on PATH (/nonexistent)",
                           (root / "venv/lib/python3*/site-packages/ziglang/zig").string(),
                           (root / "venv/lib64/python3*/site-packages/ziglang/zig").string()});
  }
}

TEST_CASE("called_as_cxx and shell_quote", "[ccshim]") {
  CHECK(ccshim::called_as_cxx("/usr/bin/g++"));
  CHECK(ccshim::called_as_cxx("c++"));
  CHECK(ccshim::called_as_cxx("x86_64-linux-gnu-g++"));
  CHECK(!ccshim::called_as_cxx("/opt/bin/cc"));
  CHECK(!ccshim::called_as_cxx("cc-shim"));
  CHECK(ccshim::shell_quote("-O2") == "-O2");
  CHECK(ccshim::shell_quote("a b") == "'a b'");
  CHECK(ccshim::shell_quote("it's") == "'it'\\''s'");
  CHECK(ccshim::shell_quote("") == "''");
}
