// Linking, wheel unpacking and launchers against real files in a temp dir.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "provkit/error.hpp"
#include "provkit/fsutil.hpp"
#include "provkit/linker.hpp"
#include "provkit/wheelinstall.hpp"
#include "provkit/wheelzip.hpp"

namespace fs = std::filesystem;
using namespace provkit::py;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/envbuild-unit-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};
}  // namespace

TEST_CASE("linker settles on a mode on the first file and replaces existing targets", "[envbuild]") {
  TempDir t;
  provkit::write_file_atomic(t.path / "a", "hello");
  provkit::write_file_atomic(t.path / "b", "world");
  Linker hard(LinkMode::hardlink);
  hard.link(t.path / "a", t.path / "x");
  CHECK(hard.mode() == LinkMode::hardlink);
  CHECK(fs::hard_link_count(t.path / "a") == 2);
  hard.link(t.path / "b", t.path / "x");  // replaces
  CHECK(provkit::read_file(t.path / "x") == "world");
  Linker copy(LinkMode::copy);
  copy.link(t.path / "a", t.path / "y");
  CHECK(fs::hard_link_count(t.path / "y") == 1);
  CHECK(provkit::read_file(t.path / "y") == "hello");
  // clone: either reflinks, or falls back once with a warning; never both silent and wrong.
  Linker clone(LinkMode::clone);
  clone.link(t.path / "a", t.path / "z");
  CHECK(provkit::read_file(t.path / "z") == "hello");
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
  std::string record = "pkg/__init__.py,sha256=nia_NpkRxFwkPGhBR7I_yeHc_PJX0pmhxjIBam_NM_Q,6\n"
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
  CHECK(provkit::read_file(t.path / "out" / "pkg" / "__init__.py") == "x = 1\n");
  CHECK(read_zip_member(t.path / "pkg-1.0-py3-none-any.whl", "pkg-1.0.dist-info/WHEEL") == "Wheel-Version: 1.0\n");
}
