// The python domain's results as envbuild prints them with --json, its default directories, and
// capture's refusal of a misnamed pylock (before anything is read or written).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "provkit/error.hpp"
#include "provkit/pyenv/capture.hpp"
#include "provkit/pyenv/create.hpp"
#include "provkit/pyenv/diff.hpp"
#include "provkit/pyenv/dirs.hpp"
#include "provkit/pyenv/verify.hpp"

#include "support/temp_dir.hpp"

using namespace provkit::pyenv;
using namespace provkit::pyspec;
using namespace provkit::wheels;

TEST_CASE("verify --json: distributions, and the lock only when one was compared", "[envbuild][json]") {
  VerifyReport r;
  r.dists.push_back({"a", "1.0", {}});
  DistReport drifted{"b", "2.0", {}};
  drifted.check.modified = {"b/x.py"};
  r.dists.push_back(drifted);
  auto j = to_json(r, "ENV", "LOCK");
  CHECK(j["environment"] == "ENV");
  CHECK(j["clean"] == false);
  CHECK(j["distributions"].size() == 2);
  CHECK(j["distributions"][1]["modified"] == nlohmann::json::array({"b/x.py"}));
  CHECK_FALSE(j.contains("lock"));
  r.lock = LockDrift{{"c==1"}, {}, {{"a", "1.0", "1.1"}}};
  j = to_json(r, "ENV", "LOCK");
  CHECK(j["lock"]["file"] == "LOCK");
  CHECK(j["lock"]["missing"] == nlohmann::json::array({"c==1"}));
  CHECK(j["lock"]["other_version"][0] == nlohmann::json({{"name", "a"}, {"installed", "1.0"}, {"locked", "1.1"}}));
}

TEST_CASE("diff --json: an absent side is null, and the differing rows are counted", "[envbuild][json]") {
  std::vector<DiffRow> rows{{"a", "1", "1", false}, {"b", "1", "", true}, {"c", "", "2", true}};
  CHECK(count_differing(rows) == 2);
  auto j = to_json(rows, "A", "B");
  CHECK(j["differing"] == 2);
  CHECK(j["packages"][1]["b"].is_null());
  CHECK(j["packages"][2]["a"].is_null());
  CHECK(j["packages"][2]["b"] == "2");
}

TEST_CASE("create --json names the environment and the seconds", "[envbuild][json]") {
  CreateResult r{{"x==1"}, {}, {"y==2"}, {}, "hardlink"};
  auto j = to_json(r, "ENV", 1.5);
  CHECK(j["environment"] == "ENV");
  CHECK(j["installed"] == nlohmann::json::array({"x==1"}));
  CHECK(j["link_mode"] == "hardlink");
  CHECK(j["seconds"] == 1.5);
}

TEST_CASE("the cache directory: given, else the environment, else XDG", "[envbuild]") {
  CHECK(wheel_cache_dir("/given") == "/given");
  ::setenv("ENVBUILD_CACHE_DIR", "/from-env", 1);
  CHECK(wheel_cache_dir("") == "/from-env");
  ::unsetenv("ENVBUILD_CACHE_DIR");
  CHECK(wheel_cache_dir("").filename() == "envbuild");
}

TEST_CASE("capture refuses a .toml lock PEP 751 would not read, before capturing", "[envbuild]") {
  provkit::test::TempDir t;
  try {
    capture_to_lock(t.path / "absent-env", t.path / "wh", t.path / "lock.toml", 1, "test");
    FAIL("no refusal");
  } catch (const provkit::Error& e) {
    CHECK(e.code() == provkit::ExitCode::usage);
    CHECK(std::string(e.what()).find("must be named pylock.toml") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(t.path / "wh"));
}
