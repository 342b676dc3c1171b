// Linking, wheel unpacking and launchers against real files in a temp dir.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/wheels/install.hpp"
#include "provkit/wheels/linker.hpp"
#include "provkit/wheels/zip.hpp"

#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit::wheels;

namespace {
using provkit::test::TempDir;
}  // namespace

TEST_CASE("linker settles on a mode on the first file and replaces existing targets", "[envbuild]") {
  TempDir t;
  provkit::util::write_file_atomic(t.path / "a", "hello");
  provkit::util::write_file_atomic(t.path / "b", "world");
  Linker hard(LinkMode::hardlink);
  hard.link(t.path / "a", t.path / "x");
  CHECK(hard.mode() == LinkMode::hardlink);
  CHECK(fs::hard_link_count(t.path / "a") == 2);
  hard.link(t.path / "b", t.path / "x");  // replaces
  CHECK(provkit::util::read_file(t.path / "x") == "world");
  Linker copy(LinkMode::copy);
  copy.link(t.path / "a", t.path / "y");
  CHECK(fs::hard_link_count(t.path / "y") == 1);
  CHECK(provkit::util::read_file(t.path / "y") == "hello");
  // clone: either reflinks, or falls back once with a warning; never both silent and wrong.
  Linker clone(LinkMode::clone);
  clone.link(t.path / "a", t.path / "z");
  CHECK(provkit::util::read_file(t.path / "z") == "hello");
  CHECK((clone.mode() == LinkMode::clone) == clone.warning().empty());
  CHECK_THROWS_AS(clone.link(t.path / "missing", t.path / "w"), provkit::Error);
}

TEST_CASE("launchers: plain shebang, /bin/sh exec form for long or spaced paths", "[envbuild]") {
  CHECK(script_shebang("/venv/bin/python") == "#!/venv/bin/python\n");
  auto spaced = script_shebang("/my venv/bin/python");
  CHECK(spaced.rfind("#!/bin/sh\n'''exec' '/my venv/bin/python' \"$0\" \"$@\"\n' '''\n", 0) == 0);
  CHECK(script_shebang("/" + std::string(130, 'x') + "/python").rfind("#!/bin/sh\n", 0) == 0);
  auto s = launcher_script("/v/bin/python", "pkg.cli:Main.run [extra]");
  CHECK(s.find("from pkg.cli import Main\n") != std::string::npos);
  CHECK(s.find("sys.exit(Main.run())") != std::string::npos);
  auto eps = script_entry_points("[console_scripts]\nfoo = a:b\n[gui_scripts]\nbar=c:d\n[other]\nx = y:z\n");
  REQUIRE(eps.size() == 2);
  CHECK(eps[1].gui);
  CHECK(eps[1].value == "c:d");
}

TEST_CASE("pack then unpack a wheel: hashes match RECORD, tampering is reported", "[envbuild]") {
  TempDir t;
  std::vector<PackEntry> entries = {{"pkg/__init__.py", {}, "x = 1\n", false},
                                    {"pkg/tool", {}, "#!/bin/sh\n", true},
                                    {"pkg-1.0.dist-info/WHEEL", {}, "Wheel-Version: 1.0\n", false}};
  std::string record =
      "pkg/__init__.py,sha256=nia_NpkRxFwkPGhBR7I_yeHc_PJX0pmhxjIBam_NM_Q,6\n"
      "pkg/tool,,\n"
      "pkg-1.0.dist-info/WHEEL,,\npkg-1.0.dist-info/RECORD,,\n";
  entries.push_back({"pkg-1.0.dist-info/RECORD", {}, record, false});
  pack_wheel(t.path / "pkg-1.0-py3-none-any.whl", entries);
  fs::create_directories(t.path / "out");
  auto w = unpack_wheel(t.path / "pkg-1.0-py3-none-any.whl", t.path / "out");
  CHECK(w.dist_info == "pkg-1.0.dist-info");
  REQUIRE(w.files.size() == 4);
  CHECK(w.files[1].executable);
  CHECK((fs::status(t.path / "out" / "pkg" / "tool").permissions() & fs::perms::owner_exec) != fs::perms::none);
  // pkg/tool and WHEEL have no hash in RECORD: both reported, __init__.py matches.
  CHECK(w.record_problems.size() == 2);
  CHECK(provkit::util::read_file(t.path / "out" / "pkg" / "__init__.py") == "x = 1\n");
  CHECK(read_zip_member(t.path / "pkg-1.0-py3-none-any.whl", "pkg-1.0.dist-info/WHEEL") == "Wheel-Version: 1.0\n");
}

TEST_CASE("unpacked in eight parts, a wheel's members are each whole, in archive order and checked", "[envbuild]") {
  TempDir t;
  std::vector<PackEntry> entries;
  for (int i = 0; i < 24; ++i) {
    std::string body;
    for (int k = 0; k < 600; ++k) body += std::to_string(i * 7919 + k * 31) + (k % 9 ? "," : "\n");
    entries.push_back({"pkg/d" + std::to_string(i % 3) + "/m" + std::to_string(i) + ".so", {}, body, i % 5 == 0});
  }
  entries.push_back({"pkg-1.0.dist-info/WHEEL", {}, "Wheel-Version: 1.0\n", false});
  const fs::path wheel = t.path / "pkg-1.0-py3-none-any.whl";
  pack_wheel(wheel, entries, "pkg-1.0.dist-info/RECORD");
  UnpackLimits parts;
  parts.part_bytes = 4096;  // 24 members of ~3 KiB: eight parts
  fs::create_directories(t.path / "out");
  auto w = unpack_wheel(wheel, t.path / "out", parts);
  CHECK(w.record_problems.empty());  // every member's hash and size as RECORD gives them
  REQUIRE(w.files.size() == entries.size() + 1);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CHECK(w.files[i].path == entries[i].name);
    CHECK(provkit::util::read_file(t.path / "out" / entries[i].name) == entries[i].content);
    CHECK(w.files[i].executable == entries[i].executable);
  }
  CHECK(w.files.back().path == "pkg-1.0.dist-info/RECORD");
}

namespace {
bool is_empty_dir(const fs::path& dir) { return fs::is_directory(dir) && fs::is_empty(dir); }

std::string refusal(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const provkit::Error& e) {
    CHECK(e.code() == provkit::ExitCode::check_failed);
    return e.what();
  }
  FAIL("not refused");
  return "";
}
}  // namespace

TEST_CASE("unpack refuses a compression bomb from the central directory, before writing a byte", "[envbuild]") {
  TempDir t;
  // 80 MiB of zeros deflate to about 80 KiB: past 64 MiB, a ratio of 1000.
  pack_wheel(t.path / "bomb-1.0-py3-none-any.whl", {{"bomb/__init__.py", {}, "", false},
                                                    {"bomb/zeros", {}, std::string(80u << 20, '\0'), false},
                                                    {"bomb-1.0.dist-info/RECORD", {}, "", false}});
  fs::create_directories(t.path / "out");
  auto msg = refusal([&] { unpack_wheel(t.path / "bomb-1.0-py3-none-any.whl", t.path / "out"); });
  CHECK(msg.find("bomb-1.0-py3-none-any.whl: unpacks to 80.0 MiB") != std::string::npos);
  CHECK(msg.find("compression bomb") != std::string::npos);
  CHECK(is_empty_dir(t.path / "out"));
}

TEST_CASE("unpack limits: total declared size and entry count", "[envbuild]") {
  TempDir t;
  pack_wheel(t.path / "w-1.0-py3-none-any.whl", {{"w/a", {}, std::string(600, 'a'), false},
                                                 {"w/b", {}, std::string(600, 'b'), false},
                                                 {"w-1.0.dist-info/RECORD", {}, "", false}});
  fs::create_directories(t.path / "out");
  UnpackLimits small;
  small.max_total_bytes = 1000;
  auto msg = refusal([&] { unpack_wheel(t.path / "w-1.0-py3-none-any.whl", t.path / "out", small); });
  CHECK(msg.find("unpacks to more than 1000 B") != std::string::npos);
  CHECK(msg.find("'w/b'") != std::string::npos);
  UnpackLimits few;
  few.max_entries = 2;
  msg = refusal([&] { unpack_wheel(t.path / "w-1.0-py3-none-any.whl", t.path / "out", few); });
  CHECK(msg.find("more than 2 entries") != std::string::npos);
  CHECK(is_empty_dir(t.path / "out"));
  // Within the limits it unpacks.
  CHECK(unpack_wheel(t.path / "w-1.0-py3-none-any.whl", t.path / "out").files.size() == 3);
}

TEST_CASE("unpack names entries that make one path both a file and a directory", "[envbuild]") {
  TempDir t;
  fs::create_directories(t.path / "out");
  pack_wheel(t.path / "c-1.0-py3-none-any.whl", {{"demo/x/y", {}, "under\n", false},
                                                 {"demo/x", {}, "file\n", false},
                                                 {"c-1.0.dist-info/RECORD", {}, "", false}});
  auto msg = refusal([&] { unpack_wheel(t.path / "c-1.0-py3-none-any.whl", t.path / "out"); });
  CHECK(msg.find("entries 'demo/x' and 'demo/x/y' conflict") != std::string::npos);
  CHECK(is_empty_dir(t.path / "out"));
  pack_wheel(t.path / "d-1.0-py3-none-any.whl",
             {{"d-1.0.dist-info/RECORD", {}, "", false}, {"other-9.9.dist-info/METADATA", {}, "Name: other\n", false}});
  msg = refusal([&] { unpack_wheel(t.path / "d-1.0-py3-none-any.whl", t.path / "out"); });
  CHECK(msg.find("more than one .dist-info directory (d-1.0.dist-info, other-9.9.dist-info)") != std::string::npos);
  CHECK(is_empty_dir(t.path / "out"));
}

TEST_CASE("the linker takes its source by name in its directory, never through a link", "[envbuild]") {
  TempDir t;
  const fs::path secret = t.write("outside/secret", "not the cache's\n");
  fs::create_directories(t.path / "tree");
  fs::create_directories(t.path / "env");
  fs::create_symlink(secret, t.path / "tree" / "f.py");  // swapped in after the cache entry was checked
  ::mkfifo((t.path / "tree" / "fifo.py").c_str(), 0600);
  for (LinkMode mode : {LinkMode::hardlink, LinkMode::copy, LinkMode::clone}) {
    CAPTURE(link_mode_name(mode));
    for (const char* name : {"f.py", "fifo.py"}) {
      Linker linker(mode);
      CHECK_THROWS_AS(linker.link(t.path / "tree" / name, t.path / "env" / name), provkit::Error);
      // Neither the link itself (a hard link of it) nor the bytes it points at reach the environment.
      CHECK_FALSE(fs::exists(fs::symlink_status(t.path / "env" / name)));
    }
  }
  CHECK(provkit::util::read_file(secret) == "not the cache's\n");
}

TEST_CASE("install_wheel links from the cache entry's tree below it: a directory link in the tree is refused",
          "[envbuild]") {
  TempDir t;
  const fs::path wheel = t.path / "demo-1.0-py3-none-any.whl";
  pack_wheel(
      wheel,
      {{"demo/__init__.py", {}, "x = 1\n", false},
       {"demo/sub/data.txt", {}, "the wheel's\n", false},
       {"demo-1.0.dist-info/METADATA", {}, "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", false},
       {"demo-1.0.dist-info/WHEEL", {}, "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n", false}},
      "demo-1.0.dist-info/RECORD");
  CacheEntry entry;
  entry.tree = t.path / "cache" / "tree";
  fs::create_directories(entry.tree);
  entry.info = unpack_wheel(wheel, entry.tree);
  REQUIRE(entry.info.record_problems.empty());  // RECORD was made from the bytes packed
  InstallScheme scheme;
  scheme.root = t.path / "env";
  scheme.purelib = scheme.platlib = scheme.root / "lib" / "python3.11" / "site-packages";
  scheme.scripts = scheme.root / "bin";
  scheme.data = scheme.root;
  scheme.python = scheme.root / "bin" / "python";
  scheme.python_xy = "3.11";
  fs::create_directories(scheme.purelib);

  // As it is, it installs.
  Linker linker(LinkMode::hardlink);
  const fs::path dist_info = install_wheel(entry, plan_install(entry, wheel.filename().string(), scheme), scheme,
                                           linker);
  CHECK(provkit::util::read_file(scheme.purelib / "demo" / "sub" / "data.txt") == "the wheel's\n");
  CHECK(fs::exists(dist_info / "RECORD"));

  // demo/sub replaced by a link to a directory outside the cache, holding a file of the same name.
  const fs::path elsewhere = t.path / "elsewhere";
  t.write("elsewhere/data.txt", "planted\n");
  fs::remove_all(entry.tree / "demo" / "sub");
  fs::create_directory_symlink(elsewhere, entry.tree / "demo" / "sub");
  fs::remove_all(scheme.root);
  fs::create_directories(scheme.purelib);
  for (LinkMode mode : {LinkMode::hardlink, LinkMode::copy}) {
    Linker again(mode);
    CHECK_THROWS_AS(install_wheel(entry, plan_install(entry, wheel.filename().string(), scheme), scheme, again),
                    provkit::Error);
    CHECK_FALSE(fs::exists(scheme.purelib / "demo" / "sub" / "data.txt"));
  }
  CHECK(fs::hard_link_count(elsewhere / "data.txt") == 1);
}

TEST_CASE("pack_wheel writes RECORD from the bytes it packs; a source is never read through a link", "[envbuild]") {
  TempDir t;
  const fs::path src = t.write("prefix/lib/mod.py", "print('hi')\n");
  std::vector<PackEntry> entries = {{"mod.py", src, "", false, t.path / "prefix"},
                                    {"mod-1.0.dist-info/WHEEL", {}, "Wheel-Version: 1.0\n", false}};
  pack_wheel(t.path / "mod-1.0-py3-none-any.whl", entries, "mod-1.0.dist-info/RECORD");
  // The hashes as Python's hashlib and base64 spell them for these bytes.
  CHECK(read_zip_member(t.path / "mod-1.0-py3-none-any.whl", "mod-1.0.dist-info/RECORD") ==
        "mod.py,sha256=yvAm8l1xQCCfmAcmBTB6Q4kUuc5vPBSyPRXZZnJB3lI,12\n"
        "mod-1.0.dist-info/WHEEL,sha256=hPnzolO11CFKQQfo-cfRSowPfsQIecdrr39HeOvVHcE,19\n"
        "mod-1.0.dist-info/RECORD,,\n");
  // A source below `below` that is a link is refused, not followed.
  fs::remove(src);
  fs::create_symlink(t.write("outside", "secret\n"), src);
  CHECK_THROWS_AS(pack_wheel(t.path / "x-1.0-py3-none-any.whl", entries, "mod-1.0.dist-info/RECORD"), provkit::Error);
}
