#include <catch2/catch.hpp>

#include <filesystem>

#include "provkit/error.hpp"
#include "provkit/pyspec/lock.hpp"
#include "provkit/util/fs.hpp"
#include "support/marker_env.hpp"

using namespace provkit::pyspec;
namespace fs = std::filesystem;

namespace {

const auto& linux311 = provkit::test::linux_cpython311();

// The verdict envbuild's reader gives a lock: "ok" or the refusal's message.
std::string verdict(const std::string& text) {
  try {
    parse_pylock(text, "pylock.toml");
    return "ok";
  } catch (const provkit::Error& e) {
    return e.code() == provkit::ExitCode::usage ? std::string(e.what()) : "exit " + std::to_string(int(e.code()));
  }
}

std::string head(const std::string& more = "") { return "lock-version = \"1.0\"\ncreated-by = \"t\"\n" + more; }
const std::string H(64, 'a');
std::string wheel(const std::string& file, const std::string& extra = "") {
  return "wheels = [{ url = \"https://x/" + file + "\", hashes = { sha256 = \"" + H + "\" }" + extra + " }]\n";
}

}  // namespace

// Every case of pypa/packaging's tests/test_pylock.py (and PEP 751's example
// lock) as a TOML file whose first line says packaging's verdict.
TEST_CASE("pylock: packaging's own test locks get packaging's verdicts", "[envbuild][locks][pylock]") {
  const fs::path dir = fs::path(PROVKIT_TEST_DATA) / "pylock" / "packaging";
  int cases = 0;
  for (auto& f : fs::directory_iterator(dir)) {
    std::string text = provkit::util::read_file(f.path());
    const std::string tag = "# expect: ";
    REQUIRE(text.rfind(tag, 0) == 0);
    std::string expect = text.substr(tag.size(), text.find('\n') - tag.size());
    INFO(f.path().filename().string());
    std::string got = verdict(text);
    if (expect == "ok") {
      CHECK(got == "ok");
    } else {
      REQUIRE(expect.rfind("error: ", 0) == 0);
      CHECK_THAT(got, Catch::Contains(expect.substr(7)));
    }
    ++cases;
  }
  CHECK(cases >= 44);
}

// What uv 0.11.15 wrote (tests/data/locks): every pylock reads, and selects for
// Linux CPython, except the --find-links one (hashes = {}), which packaging refuses too.
TEST_CASE("pylock: every uv output shape in tests/data/locks", "[envbuild][locks][pylock]") {
  const fs::path dir = fs::path(PROVKIT_TEST_DATA) / "locks" / "uv-0.11.15";
  int read = 0;
  for (auto& f : fs::recursive_directory_iterator(dir)) {
    if (!is_pylock_name(f.path())) continue;
    INFO(f.path().string());
    if (f.path().filename() == "pylock.findlinks.toml") {
      CHECK_THROWS_WITH(read_lock(f.path()), Catch::Contains("no hash for") && Catch::Contains("--generate-hashes"));
      continue;
    }
    Lock lock = read_lock(f.path());
    CHECK_FALSE(lock.entries.empty());
    auto env = linux311;
    env["python_full_version"] = "3.12.3";
    env["python_version"] = "3.12";
    CHECK_NOTHROW(applicable_entries(lock, env));
    ++read;
  }
  CHECK(read >= 12);
}

// Why item 1 of issue 22: `[[package]]` for `[[packages]]` was read as an empty lock.
TEST_CASE("pylock: a lock without 'packages' is refused, not read as empty", "[envbuild][locks][pylock]") {
  CHECK_THAT(verdict(head("[[package]]\nname = \"a\"\nversion = \"1\"\n" + wheel("a-1-py3-none-any.whl"))),
             Catch::Contains("pylock.toml:1") && Catch::Contains("Missing required value in 'packages'"));
}

// Why item 2: valid locks envbuild refused.
TEST_CASE("pylock: archive wheels, wheels without a version, lock-version 01.0", "[envbuild][locks][pylock]") {
  // uv export / uv pip compile for `torch @ https://...whl`.
  auto lock =
      parse_pylock(head("[[packages]]\nname = \"torch\"\nversion = \"2.6.0+cpu\"\narchive = { url = "
                        "\"https://download.pytorch.org/whl/cpu/torch-2.6.0%2Bcpu-cp311-cp311-linux_x86_64.whl\", "
                        "hashes = { sha256 = \"" +
                        H + "\" } }\n"),
                   "pylock.toml");
  REQUIRE(lock.entries.at(0).wheels.size() == 1);
  CHECK(lock.entries[0].wheels[0].filename == "torch-2.6.0+cpu-cp311-cp311-linux_x86_64.whl");
  CHECK(applicable_entries(lock, linux311).size() == 1);
  lock = parse_pylock(
      head("[[packages]]\nname = \"a\"\narchive = { path = \"w/a-1.0-py3-none-any.whl\", hashes = { sha256 = \"" + H +
           "\" } }\n"),
      "pylock.toml");
  CHECK(lock.entries.at(0).version == "1.0");
  CHECK(lock.entries[0].wheels.at(0).path == "w/a-1.0-py3-none-any.whl");
  // An archive that is not a wheel is valid PEP 751, refused only if selected.
  lock = parse_pylock(
      head("[[packages]]\nname = \"a\"\nmarker = \"os_name == 'nt'\"\narchive = { url = \"https://x/a-1.0.tar.gz\", "
           "hashes = { sha256 = \"" +
           H + "\" } }\n"),
      "pylock.toml");
  CHECK(applicable_entries(lock, linux311).empty());
  // A version is optional in PEP 751: the wheel's name gives it.
  lock = parse_pylock(head("[[packages]]\nname = \"a\"\n" + wheel("a-1.2-py3-none-any.whl")), "pylock.toml");
  CHECK(lock.entries.at(0).version == "1.2");
  CHECK(verdict("lock-version = \"01.0\"\ncreated-by = \"t\"\npackages = []\n") == "ok");
}

// Why item 3: invalid locks envbuild accepted.
TEST_CASE("pylock: invalid locks are refused, for every package, selected or not", "[envbuild][locks][pylock]") {
  const std::string other = "marker = \"sys_platform == 'win32'\"\n";
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\n" + wheel("a-1-py3-none-any.whl") +
                          "directory = { path = \".\" }\n")),
             Catch::Contains("None of vcs, directory, archive"));
  CHECK_THAT(verdict(head("requires-python = \">=3.x\"\npackages = []\n")), Catch::Contains("invalid specifier"));
  CHECK_THAT(verdict("lock-version = \"1.0\"\npackages = []\n"), Catch::Contains("'created-by'"));
  CHECK_THAT(verdict("lock-version = \"1.0\"\ncreated-by = 3\npackages = []\n"), Catch::Contains("'created-by'"));
  CHECK_THAT(verdict(head("[[packages]]\nname = \"A_b\"\nversion = \"1\"\n" + wheel("a_b-1-py3-none-any.whl"))),
             Catch::Contains("not normalized"));
  CHECK_THAT(verdict(head("extras = [\"Cli\"]\npackages = []\n")), Catch::Contains("not normalized in 'extras[0]'"));
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\n" + other +
                          wheel("a-1-py3-none-any.whl", ", size = \"3\""))),
             Catch::Contains("'packages[0].wheels[0].size'"));
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\n" + other +
                          wheel("a-1-py3-none-any.whl", ", upload-time = \"2024-01-01\""))),
             Catch::Contains("upload-time"));
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\nindex = 1\n" + other +
                          wheel("a-1-py3-none-any.whl"))),
             Catch::Contains("'packages[0].index'"));
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\ndependencies = [\"b\"]\n" + other +
                          wheel("a-1-py3-none-any.whl"))),
             Catch::Contains("'packages[0].dependencies[0]'"));
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\nmarker = \"python_version >> '3'\"\n" +
                          wheel("a-1-py3-none-any.whl"))),
             Catch::Contains("invalid marker") && Catch::Contains("'packages[0].marker'"));
  // environments = [] admits no interpreter.
  auto lock = parse_pylock(head("environments = []\npackages = []\n"), "pylock.toml");
  CHECK_THROWS_WITH(applicable_entries(lock, linux311), Catch::Contains("in none of them"));
}

// Why item 4: a wheel whose name is not its package's, or with no url or path, is exit 2 naming the line.
TEST_CASE("pylock: wheel names and sources are checked where the lock is read", "[envbuild][locks][pylock]") {
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\n" + wheel("b-1-py3-none-any.whl"))),
             Catch::Contains("pylock.toml:6") && Catch::Contains("not consistent with package name 'a'"));
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{ name = \"a-1-py3-none-any.whl\", "
                          "hashes = { sha256 = \"" +
                          H + "\" } }]\n")),
             Catch::Contains("path or url must be provided"));
  auto lock =
      parse_pylock(head("[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{ name = \"a-1-py3-none-any.whl\", "
                        "url = \"data:application/zip;base64,UEsFBg==\", hashes = { sha256 = \"" +
                        H + "\" } }]\n"),
                   "pylock.toml");
  CHECK_THROWS_WITH(applicable_entries(lock, linux311),
                    Catch::Contains("pylock.toml:6") && Catch::Contains("not 'data:'"));
}

// issue 20, item 10: nesting and key depth bounded before toml++ sees the file.
TEST_CASE("pylock: deep nesting and long dotted keys are refused, not a crash", "[envbuild][locks][pylock]") {
  CHECK_THAT(verdict(head("x = " + std::string(50000, '[') + std::string(50000, ']') + "\npackages = []\n")),
             Catch::Contains("nest deeper"));
  std::string key = "a";
  for (int i = 0; i < 50000; ++i) key += ".a";
  CHECK_THAT(verdict(head(key + " = 1\npackages = []\n")), Catch::Contains("dotted key"));
  std::string marker = std::string(20000, '(') + "os_name == 'posix'" + std::string(20000, ')');
  CHECK_THAT(verdict(head("[[packages]]\nname = \"a\"\nversion = \"1\"\nmarker = \"" + marker + "\"\n" +
                          wheel("a-1-py3-none-any.whl"))),
             Catch::Contains("parentheses nest deeper"));
  // Strings and comments are not structure.
  CHECK(verdict(head("# [[[[ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g\n"
                     "created = \"" +
                     std::string(100, '[') + "\"\npackages = []\n[tool.x]\ny = '''" + std::string(64, '.') +
                     "'''\n")) == "ok");
}
