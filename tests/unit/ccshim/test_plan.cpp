// cc-shim's run decided without printing or exec (ccshim::plan): the replies, the refusals, and the zig
// command line with the environment zig gets.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "provkit/ccshim/plan.hpp"

#include "support/temp_dir.hpp"

using namespace provkit::ccshim;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for one test, restoring what was there.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    value ? ::setenv(name.c_str(), value, 1) : ::unsetenv(name.c_str());
  }
  ~ScopedEnv() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
};

std::string env_of(const Exec& e, const std::string& name) {
  for (auto& [n, v] : e.env)
    if (n == name) return v;
  return "(unset)";
}

// A zig for plan() to find (never run: plan() only decides) and a global cache, in a temp dir of their own.
struct FakeZig {
  provkit::test::TempDir t;
  fs::path zig = make(t);
  ScopedEnv use{"CC_SHIM_ZIG", zig.c_str()}, global{"ZIG_GLOBAL_CACHE_DIR", (t.path / "g").c_str()},
      local{"ZIG_LOCAL_CACHE_DIR", nullptr};
  static fs::path make(const provkit::test::TempDir& dir) {
    auto path = dir.write("bin/zig", "#!/bin/sh\n");
    ::chmod(path.c_str(), 0755);
    return path;
  }
};

}  // namespace

TEST_CASE("plan: zig's libc detection and a zig that runs the shim again are refused", "[ccshim][plan]") {
  {
    ScopedEnv active("CC_SHIM_ACTIVE", nullptr), detecting("ZIG_IS_DETECTING_LIBC_PATHS", nullptr);
    CHECK_FALSE(refuse_nested_run());
  }
  {
    ScopedEnv detecting("ZIG_IS_DETECTING_LIBC_PATHS", "1");
    auto r = refuse_nested_run();
    REQUIRE(r);
    CHECK(r->code == 1);
    CHECK(r->err.find("ZIG_IS_DETECTING_LIBC_PATHS is set") != std::string::npos);
  }
  ScopedEnv active("CC_SHIM_ACTIVE", "/opt/zig");
  auto r = refuse_nested_run();
  REQUIRE(r);
  CHECK(r->code == 2);
  CHECK(r->err.find("called again from within the zig it started (/opt/zig)") != std::string::npos);
}

TEST_CASE("plan: gcc's self-queries are answered without zig; no zig is a sentence", "[ccshim][plan]") {
  ScopedEnv active("CC_SHIM_ACTIVE", nullptr), detecting("ZIG_IS_DETECTING_LIBC_PATHS", nullptr);
  ScopedEnv zig("CC_SHIM_ZIG", "/nonexistent/zig");
  auto machine = std::get<Reply>(plan({"-dumpmachine"}, "cc", false));
  CHECK(machine.code == 0);
  CHECK(machine.out.find("linux") != std::string::npos);
  auto none = std::get<Reply>(plan({"-c", "x.c"}, "cc", false));
  CHECK(none.code == 2);
  CHECK(
      none.err.starts_with("cc-shim: no zig found (looked at: CC_SHIM_ZIG=/nonexistent/zig (not an executable file))"));
}

TEST_CASE("plan: the zig command line, its cache directories, the marker and the debug line", "[ccshim][plan]") {
  ScopedEnv active("CC_SHIM_ACTIVE", nullptr), detecting("ZIG_IS_DETECTING_LIBC_PATHS", nullptr);
  provkit::test::TempDir t;
  auto zig = t.write("bin/zig", "#!/bin/sh\n");
  ::chmod(zig.c_str(), 0755);
  ScopedEnv use("CC_SHIM_ZIG", zig.c_str()), global("ZIG_GLOBAL_CACHE_DIR", (t.path / "g").c_str()),
      local("ZIG_LOCAL_CACHE_DIR", nullptr), libc("ZIG_LIBC", "/given/libc.txt");
  SECTION("quiet") {
    ScopedEnv debug("CC_SHIM_DEBUG", "0");
    auto run = std::get<Exec>(plan({"-c", "x.c", "-o", "x.o"}, "/usr/bin/cc", true));
    REQUIRE(run.argv.size() >= 2);
    CHECK(run.argv[0] == zig.string());
    CHECK(run.argv[1] == "c++");
    CHECK(env_of(run, "ZIG_GLOBAL_CACHE_DIR") == (t.path / "g").string());
    // A directory of the run's own, under the global cache, as zig's local cache (so zig's object cache
    // never swallows a compile's diagnostics); the shim removes it after zig (supervise).
    REQUIRE_FALSE(run.scratch_dir.empty());
    CHECK(fs::path(run.scratch_dir).parent_path() == t.path / "g" / "cc-shim-runs");
    CHECK(fs::is_directory(run.scratch_dir));
    CHECK(env_of(run, "ZIG_LOCAL_CACHE_DIR") == run.scratch_dir);
    CHECK(run.outputs.empty());                   // x.o is an ordinary file name
    CHECK_FALSE(run.filter_linker_warnings);      // -c: no link
    CHECK(env_of(run, "ZIG_LIBC") == "(unset)");  // the caller's stays theirs
    CHECK(env_of(run, "CC_SHIM_ACTIVE") == zig.string());
    CHECK(run.debug.empty());
  }
  SECTION("debug") {
    ScopedEnv debug("CC_SHIM_DEBUG", "1");
    auto run = std::get<Exec>(plan({"-Wl,--version"}, "cc", false));
    CHECK(run.argv == std::vector<std::string>{zig.string(), "ld.lld", "--version"});
    CHECK(run.debug == "cc-shim: exec " + zig.string() + " ld.lld --version\n");
  }
}

TEST_CASE("plan: zig's object cache kept on request, -o into what is no regular file, lld's stderr filtered",
          "[ccshim][plan]") {
  ScopedEnv active("CC_SHIM_ACTIVE", nullptr), detecting("ZIG_IS_DETECTING_LIBC_PATHS", nullptr),
      debug("CC_SHIM_DEBUG", nullptr);
  provkit::test::TempDir t;
  auto zig = t.write("bin/zig", "#!/bin/sh\n");
  ::chmod(zig.c_str(), 0755);
  ScopedEnv use("CC_SHIM_ZIG", zig.c_str()), global("ZIG_GLOBAL_CACHE_DIR", (t.path / "g").c_str()),
      local("ZIG_LOCAL_CACHE_DIR", nullptr);
  auto has = [](const Exec& e, const std::string& a) {
    return std::find(e.argv.begin(), e.argv.end(), a) != e.argv.end();
  };
  SECTION("CC_SHIM_ZIG_OBJECT_CACHE=1") {
    ScopedEnv keep("CC_SHIM_ZIG_OBJECT_CACHE", "1");
    auto run = std::get<Exec>(plan({"-c", "x.c"}, "cc", false));
    CHECK(env_of(run, "ZIG_LOCAL_CACHE_DIR") == (t.path / "g").string());
  }
  SECTION("-o /dev/null, separate and joined") {
    for (const auto& args : {std::vector<std::string>{"t.c", "-o", "/dev/null"}, {"t.c", "-o/dev/null"}}) {
      auto run = std::get<Exec>(plan(args, "cc", false));
      REQUIRE(run.outputs.size() == 1);
      CHECK(run.outputs[0].given == "/dev/null");
      CHECK_FALSE(run.outputs[0].replace_link);
      CHECK(fs::path(run.outputs[0].written).parent_path() == run.scratch_dir);
      CHECK((has(run, run.outputs[0].written) || has(run, "-o" + run.outputs[0].written)));
      CHECK_FALSE(has(run, "/dev/null"));
      CHECK(run.filter_linker_warnings);  // a link
    }
  }
  SECTION("-MF: a planted link is replaced, a FIFO written into, a file or /dev/stdout zig's") {
    const auto canary = t.write("outside/canary", "canary\n");
    fs::create_directories(t.path / "build");
    fs::create_symlink(canary, t.path / "build" / "link.d");
    fs::create_symlink(t.path / "outside" / "none", t.path / "build" / "dangling.d");
    ::mkfifo((t.path / "build" / "fifo.d").c_str(), 0600);
    for (const auto& [name, replace] : {std::pair{"link.d", true}, {"dangling.d", true}, {"fifo.d", false}}) {
      const auto dep = (t.path / "build" / name).string();
      for (const auto& args :
           {std::vector<std::string>{"-MD", "-MF", dep, "-c", "t.c"}, {"-MD", "-MF" + dep, "-c", "t.c"}}) {
        auto run = std::get<Exec>(plan(args, "cc", false));
        REQUIRE(run.outputs.size() == 1);
        CHECK(run.outputs[0].given == dep);
        CHECK(run.outputs[0].replace_link == replace);
        CHECK(fs::path(run.outputs[0].written).parent_path() == run.scratch_dir);
        CHECK_FALSE(has(run, dep));
        CHECK_FALSE(has(run, "-MF" + dep));
      }
    }
    t.write("build/plain.d", "");
    for (const auto& dep : {(t.path / "build" / "plain.d").string(), std::string("/dev/stdout")})
      CHECK(std::get<Exec>(plan({"-MD", "-MF", dep, "-c", "t.c"}, "cc", false)).outputs.empty() ==
            fs::is_regular_file(dep));
    // A link at -o to a file is zig's to replace, as it always did.
    CHECK(
        std::get<Exec>(plan({"-c", "t.c", "-o", (t.path / "build" / "link.d").string()}, "cc", false)).outputs.empty());
  }
  SECTION("an ordinary or a missing -o file is zig's to write") {
    auto run = std::get<Exec>(plan({"t.c", "-o", (t.path / "out").string()}, "cc", false));
    CHECK(run.outputs.empty());
    CHECK(has(run, (t.path / "out").string()));
  }
  SECTION("gcc's own warning for -fno-rtti on C") {
    CHECK(std::get<Exec>(plan({"-fno-rtti", "-fno-exceptions", "-c", "conftest.c"}, "cc", false)).preface ==
          "cc1: warning: command-line option '-fno-rtti' is valid for C++/D/ObjC++ but not for C\n");
    CHECK(std::get<Exec>(plan({"-fno-rtti", "-c", "conftest.cpp"}, "cc", false)).preface.empty());
    CHECK(std::get<Exec>(plan({"-fno-rtti", "-c", "conftest.c"}, "c++", true)).preface.empty());
  }
}

TEST_CASE("plan: an -o that is one of the inputs, an empty -o or -MF: refused before zig, exit 1 as gcc",
          "[ccshim][plan]") {
  ScopedEnv active("CC_SHIM_ACTIVE", nullptr), detecting("ZIG_IS_DETECTING_LIBC_PATHS", nullptr),
      debug("CC_SHIM_DEBUG", nullptr);
  FakeZig fake;
  const auto& t = fake.t;
  const auto a = t.write("src/a.c", "int a;\n").string(), b = t.write("src/b.c", "int b;\n").string();
  const auto object = t.write("src/a.o", "").string();
  fs::create_directories(t.path / "src" / "sub");
  fs::create_symlink(a, t.path / "src" / "s.c");
  fs::create_hard_link(a, t.path / "src" / "h.c");
  const auto sym = (t.path / "src" / "s.c").string(), hard = (t.path / "src" / "h.c").string();
  const auto dotted = (t.path / "src" / "sub" / ".." / "." / "a.c").string();
  const auto rsp = t.write("src/args.rsp", "-c " + a + " -o " + a).string();
  const auto odd = t.write("src/x\x1b[2J\n.c", "int x;\n").string();
  auto refused = [&](const std::vector<std::string>& args) -> std::string {
    auto plan_of = plan(args, "cc", false);
    if (!std::holds_alternative<Reply>(plan_of)) return "(not refused)";
    auto r = std::get<Reply>(plan_of);
    CHECK(r.code == 1);  // gcc's status for each of these
    CHECK(r.out.empty());
    return r.err;
  };
  const std::string same = "is the same as output file";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-c", a, "-o", a},
           {"-E", a, "-o", a},
           {"-S", a, "-o", a},
           {a, "-o", a},  // a link
           {"-c", a, "-o" + a},
           {"-c", a, "-o", dotted},
           {"-c", b, a, "-o", a},
           {"-c", sym, "-o", a},
           {"-c", a, "-o", sym},
           {"-c", a, "-o", hard},
           {object, "-o", object},
           {"-c", a, "-o", object, "-o", a},  // the last -o is the one
           {"@" + rsp},
       }) {
    INFO(args.back());
    CHECK_THAT(refused(args), Catch::Contains(same));
  }
  CHECK(refused({"-c", a, "-o", a}) == "cc-shim: fatal error: input file '" + a + "' " + same + "\n");
  CHECK(refused({"-c", sym, "-o", a}) == "cc-shim: fatal error: input file '" + sym + "' " + same + " '" + a + "'\n");
  // A name from a Makefile is shown escaped, on one line.
  CHECK_THAT(refused({"-c", odd, "-o", odd}), Catch::Contains("x\\x1b[2J\\n.c") && !Catch::Contains("\x1b"));
  CHECK(fs::file_size(a) == 7);  // nothing was written
  // An empty -MF or -o is refused (gcc's cc1 cannot open '' and its driver says so); the last -MF counts.
  CHECK_THAT(refused({"-c", a, "-MD", "-MF", ""}), Catch::Contains("empty -MF"));
  CHECK_THAT(refused({"-c", a, "-MD", "-MF", "x.d", "-MF", ""}), Catch::Contains("empty -MF"));
  CHECK_THAT(refused({"-c", a, "-o", ""}), Catch::Contains("output filename may not be empty"));
  // Where gcc goes on, so does the shim: another output, the last -o another file, -MF naming a source
  // (gcc writes it), /dev/null both read and written, a missing output.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-c", a, "-o", object},
           {"-c", a, "-o", a, "-o", object},
           {"-c", a, "-MD", "-MF", "", "-MF", (t.path / "a.d").string()},
           {"-c", a, "-MD", "-MF", b},
           {"-E", "-x", "c", "/dev/null", "-o", "/dev/null"},
           {"-c", a, "-o", (t.path / "new.o").string()},
       }) {
    INFO(args.back());
    CHECK(refused(args) == "(not refused)");
  }
}

TEST_CASE("plan: the CC_SHIM_DEBUG line shows an argument's newline and escape sequence escaped", "[ccshim][plan]") {
  ScopedEnv active("CC_SHIM_ACTIVE", nullptr), detecting("ZIG_IS_DETECTING_LIBC_PATHS", nullptr),
      debug("CC_SHIM_DEBUG", "1");
  FakeZig fake;
  auto run = std::get<Exec>(plan({"-c", "x.c", "-DNAME=\"a\nOK b\"", "-DC=\x1b[2J\x9b"}, "cc", false));
  CHECK(run.debug.find('\n') == run.debug.size() - 1);  // one line
  CHECK(run.debug.find('\x1b') == std::string::npos);
  CHECK_THAT(run.debug, Catch::Contains("a\\nOK b") && Catch::Contains("\\x1b[2J\\x9b"));
}
