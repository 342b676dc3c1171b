// Packing and unpacking wheels (wheels/zip.cpp) against real zips in a temp dir.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <thread>

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

TEST_CASE("unpacked in parts, a wheel's members are each whole, in archive order and checked", "[envbuild]") {
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
  parts.part_bytes = 4096;  // 24 members of 3.2-4.2 KiB: one or two to a part
  fs::create_directories(t.path / "out");
  auto w = unpack_wheel(wheel, t.path / "out", parts);
  CHECK(WheelUnpack(wheel, t.path / "probe", parts).parts() >= 12);
  CHECK(w.record_problems.empty());  // every member's hash and size as RECORD gives them
  REQUIRE(w.files.size() == entries.size() + 1);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CHECK(w.files[i].path == entries[i].name);
    CHECK(provkit::util::read_file(t.path / "out" / entries[i].name) == entries[i].content);
    CHECK(w.files[i].executable == entries[i].executable);
  }
  CHECK(w.files.back().path == "pkg-1.0.dist-info/RECORD");
}

TEST_CASE("a member as large as a part is a part of its own; parts run in any order, on any thread", "[envbuild]") {
  TempDir t;
  auto body = [](int seed, std::size_t bytes) {
    std::string b;
    for (int k = 0; b.size() < bytes; ++k) b += std::to_string(seed * 7919 + k * 31) + (k % 9 ? "," : "\n");
    return b;
  };
  // small, small, LARGE, small, LARGE, LARGE, small (+ WHEEL and RECORD, small)
  std::vector<std::size_t> sizes = {1000, 1000, 9000, 1000, 12000, 9000, 1000};
  std::vector<PackEntry> entries;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    entries.push_back({"pkg/m" + std::to_string(i), {}, body(static_cast<int>(i), sizes[i]), false});
  entries.push_back({"pkg-1.0.dist-info/WHEEL", {}, "Wheel-Version: 1.0\n", false});
  const fs::path wheel = t.path / "pkg-1.0-py3-none-any.whl";
  pack_wheel(wheel, entries, "pkg-1.0.dist-info/RECORD");
  UnpackLimits limits;
  limits.part_bytes = 8192;
  fs::create_directories(t.path / "out");
  WheelUnpack unpack(wheel, t.path / "out", limits);
  // [m0 m1] [m2] [m3] [m4] [m5] [m6 WHEEL RECORD]: each large member alone, the small ones between grouped.
  REQUIRE(unpack.parts() == 6);
  std::vector<std::uint64_t> part_sizes;
  for (std::size_t p = 0; p < unpack.parts(); ++p) part_sizes.push_back(unpack.part_size(p));
  CHECK(part_sizes[1] == entries[2].content.size());
  CHECK(part_sizes[3] == entries[4].content.size());
  CHECK(part_sizes[4] == entries[5].content.size());
  CHECK(part_sizes[0] == entries[0].content.size() + entries[1].content.size());
  // Last part first, then the rest backwards, each on a thread of its own.
  for (std::size_t p = unpack.parts(); p-- > 0;) std::thread([&] { unpack.run_part(p); }).join();
  auto w = unpack.finish();
  CHECK(w.record_problems.empty());
  REQUIRE(w.files.size() == entries.size() + 1);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CHECK(w.files[i].path == entries[i].name);
    CHECK(provkit::util::read_file(t.path / "out" / entries[i].name) == entries[i].content);
  }
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

TEST_CASE("read_wheel_record reads the one .dist-info's RECORD and nothing else", "[envbuild]") {
  TempDir t;
  // A wheel as packed: its RECORD is the last member, listing itself without a hash.
  const fs::path wheel = t.path / "pkg-1.0-py3-none-any.whl";
  pack_wheel(wheel,
             {{"pkg/__init__.py", {}, "X = 1\n", false}, {"pkg-1.0.dist-info/METADATA", {}, "Name: pkg\n", false}},
             "pkg-1.0.dist-info/RECORD");
  auto r = read_wheel_record(wheel, 1 << 20);
  REQUIRE(r);
  CHECK(r->dist_info == "pkg-1.0.dist-info");
  CHECK(r->text == read_zip_member(wheel, "pkg-1.0.dist-info/RECORD"));
  CHECK(r->text.find("pkg/__init__.py,sha256=") != std::string::npos);
  // Over the limit: refused, not cut short.
  CHECK_THROWS_AS(read_wheel_record(wheel, 16), provkit::Error);
  // No RECORD, one nested deeper than the top-level .dist-info, or two .dist-info directories with one each:
  // none is the wheel's RECORD.
  pack_wheel(t.path / "none-1.0-py3-none-any.whl", {{"none/__init__.py", {}, "", false}});
  CHECK_FALSE(read_wheel_record(t.path / "none-1.0-py3-none-any.whl", 1 << 20));
  pack_wheel(t.path / "deep-1.0-py3-none-any.whl",
             {{"deep/vendored/x-1.0.dist-info/RECORD", {}, "x/a.py,sha256=AAAA,1\n", false}});
  CHECK_FALSE(read_wheel_record(t.path / "deep-1.0-py3-none-any.whl", 1 << 20));
  pack_wheel(t.path / "two-1.0-py3-none-any.whl",
             {{"two-1.0.dist-info/RECORD", {}, "two/a.py,sha256=AAAA,1\n", false},
              {"other-2.0.dist-info/RECORD", {}, "o/b.py,sha256=BBBB,1\n", false}});
  CHECK_FALSE(read_wheel_record(t.path / "two-1.0-py3-none-any.whl", 1 << 20));
}

TEST_CASE("entry names outside ASCII are UTF-8 whatever the locale, read and written", "[envbuild][zip-names]") {
  // The tools run under the C locale, where libarchive's conversion of a UTF-8 name fails; pip installs these.
  TempDir t;
  const fs::path wheel = t.path / "demo-1.0-py3-none-any.whl";
  const std::string name = "demo/\xc3\xbcn\xc3\xaf.txt";  // demo/ünï.txt
  pack_wheel(wheel,
             {{name, {}, "umlauts\n", false},
              {"demo-1.0.dist-info/METADATA", {}, "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", false}},
             "demo-1.0.dist-info/RECORD");
  // Written with the zip's UTF-8 flag (general purpose bit 11 of the first local header), so that every
  // reader (Python's zipfile, pip, unzip) takes the name as UTF-8 rather than CP437.
  const std::string bytes = provkit::util::read_file(wheel);
  REQUIRE(bytes.size() > 30);
  REQUIRE(bytes.compare(0, 4, "PK\x03\x04") == 0);
  CHECK((static_cast<unsigned char>(bytes[7]) & 0x08) != 0);
  CHECK(bytes.compare(30, name.size(), name) == 0);
  // Read back: the entry is found by its UTF-8 name and unpacked under it.
  const UnpackedWheel unpacked = unpack_wheel(wheel, t.path / "tree");
  CHECK(unpacked.record_problems.empty());
  CHECK(provkit::util::read_file(t.path / "tree" / name) == "umlauts\n");
  CHECK(read_zip_member(wheel, name) == "umlauts\n");
}

TEST_CASE("the cache's files are 0644 and 0755 whatever the umask of the run that fills it", "[envbuild][modes]") {
  TempDir t;
  const fs::path wheel = t.path / "demo-1.0-py3-none-any.whl";
  pack_wheel(wheel, {{"demo/a.py", {}, "x = 1\n", false}, {"demo/tool", {}, "#!/bin/sh\n", true}},
             "demo-1.0.dist-info/RECORD");
  const mode_t before = ::umask(077);
  unpack_wheel(wheel, t.path / "tree");
  ::umask(before);
  struct stat st {};
  REQUIRE(::stat((t.path / "tree" / "demo" / "a.py").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  REQUIRE(::stat((t.path / "tree" / "demo" / "tool").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
}
