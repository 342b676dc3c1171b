// An environment's layout as the scheme wheels are installed by. Creating the skeleton (pyvenv.cfg, the
// interpreter links, activate) with a real python3 is tested in tests/integration/envbuild/test_install.py.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "provkit/pyenv/venv.hpp"

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
