// Installed distributions: removing one against its RECORD, in a temp dir.
#include <catch2/catch.hpp>

#include <filesystem>

#include "provkit/pyenv/installed.hpp"
#include "provkit/util/fs.hpp"

#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit::pyenv;
using provkit::test::TempDir;

TEST_CASE("uninstall follows the environment's own lib64 link but never a link below it", "[envbuild]") {
  TempDir t;
  const fs::path env = t.path / "env", site = env / "lib" / "python3.11" / "site-packages";
  fs::create_directories(site / "demo");
  fs::create_directories(site / "demo-1.0.dist-info");
  fs::create_directories(env / "bin");
  fs::create_directories(t.path / "outside");
  fs::create_directory_symlink("lib", env / "lib64");
  fs::create_directory_symlink(t.path / "outside", site / "demo" / "out");
  for (auto p : {site / "demo" / "__init__.py", env / "bin" / "demo", t.path / "outside" / "victim", t.path / "victim"})
    provkit::util::write_file_atomic(p, "x\n");
  provkit::util::write_file_atomic(
      site / "demo-1.0.dist-info" / "RECORD",
      "demo/__init__.py,,\n../../../bin/demo,,\ndemo/out/victim,,\n../../../../victim,,\n" +
          (t.path / "victim").string() + ",,\ndemo-1.0.dist-info/RECORD,,\n");
  // Listed through lib64, as a platlib of lib64/pythonX.Y/site-packages would be.
  InstalledDist d{"demo", "1.0", env / "lib64" / "python3.11" / "site-packages" / "demo-1.0.dist-info"};
  auto left = uninstall_dist(env, d);
  CHECK(left == std::vector<std::string>{"demo/out/victim", "../../../../victim", (t.path / "victim").string()});
  CHECK(!fs::exists(site / "demo" / "__init__.py"));
  CHECK(!fs::exists(env / "bin" / "demo"));
  CHECK(!fs::exists(site / "demo-1.0.dist-info"));
  CHECK(fs::exists(t.path / "outside" / "victim"));
  CHECK(fs::exists(t.path / "victim"));
}
