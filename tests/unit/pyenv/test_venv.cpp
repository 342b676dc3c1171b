// An environment's layout as the scheme wheels are installed by. Creating the skeleton (pyvenv.cfg, the
// interpreter links, activate) with a real python3 is tested in tests/integration/envbuild/test_install.py.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "provkit/error.hpp"
#include "provkit/pyenv/venv.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit::pyenv;

TEST_CASE("install_scheme: the layout's directories, bin/python and the skeleton no wheel may replace", "[envbuild]") {
  Interpreter it;
  it.major = 3;
  it.minor = 11;
  it.venv_paths = {{"platlib", "lib64/python3.11/site-packages"}};
  auto layout = venv_layout("/srv/env", it);
  auto s = install_scheme(layout);
  CHECK(s.root == "/srv/env");
  CHECK(s.purelib == "/srv/env/lib/python3.11/site-packages");
  CHECK(s.platlib == "/srv/env/lib64/python3.11/site-packages");
  CHECK(s.scripts == "/srv/env/bin");
  CHECK(s.data == "/srv/env");
  CHECK(s.python == "/srv/env/bin/python");
  CHECK(s.python_xy == "3.11");
  CHECK(s.skeleton == venv_skeleton(layout));
  CHECK(std::find(s.skeleton.begin(), s.skeleton.end(), fs::path("/srv/env/pyvenv.cfg")) != s.skeleton.end());
  CHECK(std::find(s.skeleton.begin(), s.skeleton.end(), fs::path("/srv/env/bin/python3.11")) != s.skeleton.end());
}

TEST_CASE("EnvLock: create holds its environment alone, verify shares it, a waiter is told and then refused",
          "[envbuild]") {
  using namespace std::chrono_literals;
  provkit::test::TempDir t("envlock");
  const fs::path env = t / "env";
  // A first create makes the directory and the lock file, and writes its pid there.
  EnvLock create = EnvLock::take(env, EnvLock::Mode::exclusive, 0ms);
  REQUIRE(create.held());
  std::ifstream pid_file(env / ".lock");
  long pid = 0;
  pid_file >> pid;
  CHECK(pid == static_cast<long>(::getpid()));
  // flock(2) locks belong to the open file: a second take in this process is another run.
  long told = -1;
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(EnvLock::take(env, EnvLock::Mode::exclusive, 300ms, [&](long holder) { told = holder; }),
                    Catch::Contains("is in use by another run (pid " + std::to_string(::getpid()) + ")"));
  CHECK(std::chrono::steady_clock::now() - started >= 300ms);
  CHECK(told == ::getpid());
  CHECK_THROWS_AS(EnvLock::take(env, EnvLock::Mode::shared, 0ms), provkit::Error);
  create = EnvLock();  // released
  {
    EnvLock verify1 = EnvLock::take(env, EnvLock::Mode::shared, 0ms);
    EnvLock verify2 = EnvLock::take(env, EnvLock::Mode::shared, 0ms);
    CHECK((verify1.held() && verify2.held()));
    CHECK_THROWS_AS(EnvLock::take(env, EnvLock::Mode::exclusive, 0ms), provkit::Error);
  }
  CHECK(EnvLock::take(env, EnvLock::Mode::exclusive, 0ms).held());
  // verify makes nothing: no directory, no lock.
  CHECK_FALSE(EnvLock::take(t / "missing", EnvLock::Mode::shared, 0ms).held());
  CHECK_FALSE(fs::exists(t / "missing"));
  // A .lock planted as a link is never followed (nor its target created).
  fs::create_directories(t / "planted");
  fs::create_symlink(t / "elsewhere", t / "planted" / ".lock");
  CHECK_THROWS_AS(EnvLock::take(t / "planted", EnvLock::Mode::exclusive, 0ms), provkit::Error);
  CHECK_THROWS_AS(EnvLock::take(t / "planted", EnvLock::Mode::shared, 0ms), provkit::Error);
  CHECK_FALSE(fs::exists(t / "elsewhere"));
}
