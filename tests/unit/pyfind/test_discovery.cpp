// Where an interpreter is found: the places and their order, from a tree of stand-in executables (discovery
// only looks at files; asking a real interpreter is tests/integration/envbuild/test_interpreters.py).
#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "provkit/pyfind/discovery.hpp"
#include "provkit/util/environment.hpp"
#include "support/reason_of.hpp"
#include "support/temp_dir.hpp"

using namespace provkit::pyfind;
using provkit::test::TempDir;

namespace {

std::string this_machine() {
  struct utsname u {};
  ::uname(&u);
  return u.machine;
}

fs::path executable(const TempDir& t, const fs::path& relative, std::string_view body = "#!/bin/sh\nexit 0\n") {
  auto p = t.write(relative, body);
  ::chmod(p.c_str(), 0755);
  return p;
}

// The candidates below `root`, as paths relative to it, each with its source.
std::vector<std::pair<std::string, Source>> below(const std::vector<Candidate>& all, const fs::path& root) {
  std::vector<std::pair<std::string, Source>> out;
  for (const auto& c : all) {
    auto rel = c.executable.lexically_relative(root).string();
    if (!rel.empty() && !rel.starts_with("..")) out.emplace_back(rel, c.source);
  }
  return out;
}

// Those of them from `sources`.
std::vector<std::pair<std::string, Source>> from(std::vector<std::pair<std::string, Source>> all,
                                                 std::initializer_list<Source> sources) {
  std::erase_if(all,
                [&](const auto& c) { return std::find(sources.begin(), sources.end(), c.second) == sources.end(); });
  return all;
}

}  // namespace

TEST_CASE("the environment is read through the tool's lookup, each variable once, and no other", "[pyfind]") {
  std::map<std::string, std::string> values{{"PATH", "/p"},
                                            {"HOME", "/h"},
                                            {"XDG_DATA_HOME", "/d"},
                                            {"XDG_BIN_HOME", "/b"},
                                            {"ENVBUILD_PYTHON_DIR", "/m"},
                                            {"UV_PYTHON_INSTALL_DIR", "/uv"},
                                            {"UV_PYTHON_BIN_DIR", "/uvbin"},
                                            {"PYENV_ROOT", "/pyenv"},
                                            {"CONDA_PREFIX", "/conda"}};
  std::vector<std::string> asked;
  auto env = Environment::read([&](const char* name) {
    asked.emplace_back(name);
    return values.count(name) ? values[name] : std::string();
  });
  CHECK(asked == std::vector<std::string>(environment_variables().begin(), environment_variables().end()));
  CHECK(env.path == "/p");
  CHECK(env.home == "/h");
  CHECK(managed_dir(env) == "/m");
  CHECK(uv_install_dir(env) == "/uv");
  CHECK(uv_bin_dir(env) == "/uvbin");
  CHECK(env.pyenv_root == "/pyenv");
  CHECK(env.conda_prefix == "/conda");
}

TEST_CASE("the default folders follow XDG as uv does; a relative XDG value is ignored", "[pyfind]") {
  Environment env;
  env.home = "/home/u";
  CHECK(managed_dir(env) == "/home/u/.local/share/provkit/pythons");
  CHECK(uv_install_dir(env) == "/home/u/.local/share/uv/python");
  CHECK(uv_bin_dir(env) == "/home/u/.local/bin");
  env.xdg_data_home = "/data";
  env.xdg_bin_home = "/xbin";
  CHECK(managed_dir(env) == "/data/provkit/pythons");
  CHECK(uv_install_dir(env) == "/data/uv/python");
  CHECK(uv_bin_dir(env) == "/xbin");
  env.xdg_data_home = "relative/data";
  env.xdg_bin_home = "relative/bin";
  CHECK(uv_install_dir(env) == "/home/u/.local/share/uv/python");
  CHECK(uv_bin_dir(env) == "/home/u/.local/bin");
}

TEST_CASE("a version is looked for in envbuild's, uv's installs and links, PATH, pyenv, conda, then the system's",
          "[pyfind]") {
  TempDir t("pyfind");
  const std::string m = this_machine();
  Environment env;
  env.home = t / "home";
  env.path = (t / "onpath").string();
  env.managed_dir = t / "managed";
  env.conda_prefix = t / "active-conda";
  const std::string uv = "home/.local/share/uv/python/";
  executable(t, "managed/cpython-3.11.9-x86_64-aaaaaaaa/python/bin/python3.11");
  executable(t, "managed/cpython-3.11.10-x86_64-bbbbbbbb/python/bin/python3.11");
  executable(t, "managed/cpython-3.1.4-x86_64-cccccccc/python/bin/python3.1");  // 3.1 is not 3.11
  executable(t, uv + "cpython-3.11.9-linux-" + m + "-gnu/bin/python3.11");
  executable(t, uv + "cpython-3.11.10-linux-" + m + "-gnu/install/bin/python3.11");  // uv before 0.3
  executable(t, uv + "cpython-3.11.11+freethreaded-linux-" + m + "-gnu/bin/python3.11");
  executable(t, uv + "cpython-3.11.12-linux-" + m + "-musl/bin/python3.11");
  executable(t, uv + "cpython-3.11.12-linux-other-gnu/bin/python3.11");
  executable(t, uv + "cpython-3.12.1-linux-" + m + "-gnu/bin/python3.12");
  executable(t, "onpath/python3.11");
  executable(t, "home/.local/bin/python3.11");
  executable(t, "home/.pyenv/versions/3.11.2/bin/python3.11");
  executable(t, "home/.pyenv/versions/3.11.10/bin/python3.11");
  executable(t, "home/.pyenv/versions/3.12.0/bin/python3.12");
  executable(t, "active-conda/bin/python3.11");
  executable(t, "home/miniforge3/bin/python3.11");
  executable(t, "home/miniforge3/envs/serve/bin/python3.11");
  executable(t, "home/anaconda3/envs/old/bin/python3.11");

  auto found = below(candidates("3.11", env), t.path);
  std::vector<std::pair<std::string, Source>> want{
      {"managed/cpython-3.11.10-x86_64-bbbbbbbb/python/bin/python3.11", Source::managed},
      {"managed/cpython-3.11.9-x86_64-aaaaaaaa/python/bin/python3.11", Source::managed},
      {uv + "cpython-3.11.10-linux-" + m + "-gnu/install/bin/python3.11", Source::uv_managed},
      {uv + "cpython-3.11.9-linux-" + m + "-gnu/bin/python3.11", Source::uv_managed},
      {"home/.local/bin/python3.11", Source::uv_link},
      {"onpath/python3.11", Source::path},
      {"home/.pyenv/versions/3.11.10/bin/python3.11", Source::pyenv},
      {"home/.pyenv/versions/3.11.2/bin/python3.11", Source::pyenv},
      {"active-conda/bin/python3.11", Source::conda},
      {"home/miniforge3/bin/python3.11", Source::conda},
      {"home/miniforge3/envs/serve/bin/python3.11", Source::conda},
      {"home/miniconda3/bin/python3.11", Source::conda},
      {"home/anaconda3/bin/python3.11", Source::conda},
      {"home/anaconda3/envs/old/bin/python3.11", Source::conda},
  };
  CHECK(found == want);
  auto all = candidates("3.11", env);
  REQUIRE(all.size() >= 2);
  CHECK(all[all.size() - 2].executable == "/usr/local/bin/python3.11");
  CHECK(all.back().executable == "/usr/bin/python3.11");

  // A patch version: only that one.
  CHECK(from(below(candidates("3.12.1", env), t.path), {Source::managed, Source::uv_managed}) ==
        std::vector<std::pair<std::string, Source>>{
            {uv + "cpython-3.12.1-linux-" + m + "-gnu/bin/python3.12", Source::uv_managed}});

  // The first that exists wins, and each place is skipped when empty: envbuild's newest, then uv's newest, ...
  CHECK(find_python("3.11", env).executable == t / "managed/cpython-3.11.10-x86_64-bbbbbbbb/python/bin/python3.11");
  fs::remove_all(t / "managed");
  CHECK(find_python("3.11", env).source == Source::uv_managed);
  CHECK(find_python("3.11", env).executable == t / (uv + "cpython-3.11.10-linux-" + m + "-gnu/install/bin/python3.11"));
  fs::remove_all(t / "home/.local/share/uv");
  CHECK(find_python("3.11", env).executable == t / "home/.local/bin/python3.11");
  fs::remove(t / "home/.local/bin/python3.11");
  CHECK(find_python("3.11", env).executable == t / "onpath/python3.11");
  env.path.clear();
  CHECK(find_python("3.11", env).executable == t / "home/.pyenv/versions/3.11.10/bin/python3.11");
  fs::remove_all(t / "home/.pyenv");
  CHECK(find_python("3.11", env).executable == t / "active-conda/bin/python3.11");
}

TEST_CASE("UV_PYTHON_INSTALL_DIR and UV_PYTHON_BIN_DIR move uv's places", "[pyfind]") {
  TempDir t("pyfind");
  Environment env;
  env.home = t / "home";
  env.uv_python_install_dir = t / "uv-installs";
  env.uv_python_bin_dir = t / "uv-bin";
  executable(t, "uv-installs/cpython-3.11.4-linux-" + this_machine() + "-gnu/bin/python3.11");
  executable(t, "uv-bin/python3.11");
  executable(t, "home/.local/share/uv/python/cpython-3.11.5-linux-" + this_machine() + "-gnu/bin/python3.11");
  executable(t, "home/.local/bin/python3.11");
  CHECK(from(below(candidates("3.11", env), t.path), {Source::uv_managed, Source::uv_link}) ==
        std::vector<std::pair<std::string, Source>>{
            {"uv-installs/cpython-3.11.4-linux-" + this_machine() + "-gnu/bin/python3.11", Source::uv_managed},
            {"uv-bin/python3.11", Source::uv_link}});
}

TEST_CASE("a pyenv shim on PATH is skipped for a version and names its root", "[pyfind]") {
  TempDir t("pyfind");
  Environment env;
  env.home = t / "home";
  const auto root = t / "elsewhere-pyenv";
  executable(t, "elsewhere-pyenv/shims/python3.11",
             "#!/usr/bin/env bash\nset -e\nexport PYENV_ROOT=\"" + root.string() + "\"\nexec \"" + root.string() +
                 "/libexec/pyenv\" exec \"$program\" \"$@\"\n");
  executable(t, "elsewhere-pyenv/versions/3.11.7/bin/python3.11");
  env.path = (root / "shims").string();
  CHECK(below(candidates("3.11", env), root) ==
        std::vector<std::pair<std::string, Source>>{{"versions/3.11.7/bin/python3.11", Source::pyenv}});
  // A command is PATH's, shim or not.
  CHECK(below(candidates("python3.11", env), t.path) ==
        std::vector<std::pair<std::string, Source>>{{"elsewhere-pyenv/shims/python3.11", Source::path}});
  CHECK(find_python("python3.11", env).executable == root / "shims/python3.11");
}

TEST_CASE("nothing found names every place looked in, uv's folder among them", "[pyfind]") {
  TempDir t("pyfind");
  Environment env;
  env.home = t / "home";
  env.path = (t / "bin").string();
  try {
    find_python("3.99", env);
    FAIL("found a 3.99");
  } catch (const provkit::Error& e) {
    CHECK(e.is(DiscoveryRefusal::not_found));
    CHECK(e.code() == provkit::ExitCode::usage);
    std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("no interpreter found for 3.99"));
    CHECK_THAT(what, Catch::Contains("uv's installs " + (t / "home/.local/share/uv/python").string()));
    CHECK_THAT(what, Catch::Contains("uv's links " + (t / "home/.local/bin").string()));
    CHECK_THAT(what, Catch::Contains("envbuild's installs " + (t / "home/.local/share/provkit/pythons").string()));
    CHECK_THAT(what, Catch::Contains("pyenv's versions " + (t / "home/.pyenv/versions").string()));
    CHECK_THAT(what, Catch::Contains("conda " + (t / "home/miniforge3").string()));
    CHECK_THAT(what, Catch::Contains("/usr/bin"));
  }
  CHECK(provkit::test::reason_of([&] { find_python("./not-there/python3", env); }) ==
        provkit::ReasonId(DiscoveryRefusal::not_executable));
  CHECK(provkit::test::reason_of([&] { find_python("python-none", env); }) ==
        provkit::ReasonId(DiscoveryRefusal::not_found));
}

// Readers that take their variables by name (pyfind's discovery) ask only for variables the table holds, so
// docs/environment.md lists every one of them.
TEST_CASE("discovery: every variable it reads is in the environment registry", "[pyfind]") {
  for (auto name : environment_variables()) {
    INFO(name);
    CHECK_NOTHROW(provkit::util::env_by_name(name));
  }
}
