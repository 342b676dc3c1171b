// cc-shim's response files: gcc's @files expanded before anything else, and a command line too long for
// exec packed into a response file for zig.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ccshim/ccshim.hpp"
#include "provkit/error.hpp"

#include "ccshim/fake_system.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace ccshim_test;

TEST_CASE("response files are expanded before anything else", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/d/libcuda.so.1"] = x86_64;
  sys.response_files["args.rsp"] = "-l:libcuda.so.1 -L/d\n-u sym";
  auto out = body(translated({"-O2", "@args.rsp", "x.c"}, sys.context()));
  CHECK(out == Args{"-O2", "/d/libcuda.so.1", "-L/d", "-Wl,-u,sym", "x.c"});
}

TEST_CASE("response files: gcc's quoting and escapes", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["q.rsp"] = "'-DA=a b' \"-DB=c d\" -DC=e\\ f \"\" -DD='x'y \\'";
  auto out = ccshim::expand_response_files({"@q.rsp"}, sys.context());
  CHECK(out == Args{"-DA=a b", "-DB=c d", "-DC=e f", "", "-DD=xy", "'"});
}

TEST_CASE("response files: nested ones are expanded too", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["outer.rsp"] = "-O1 @inner.rsp -g";
  sys.response_files["inner.rsp"] = "-DINNER @innermost.rsp";
  sys.response_files["innermost.rsp"] = "-DDEEP";
  CHECK(ccshim::expand_response_files({"@outer.rsp", "z.c"}, sys.context()) ==
        Args{"-O1", "-DINNER", "-DDEEP", "-g", "z.c"});
}

TEST_CASE("response files: an unreadable one is a missing input, named printably; an empty one vanishes", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["empty.rsp"] = " \n ";
  CHECK(ccshim::expand_response_files({"@empty.rsp", "@", "-o", "@out"}, sys.context()) == Args{"@", "-o", "@out"});
  try {
    ccshim::expand_response_files({"-c", "@odd\nFORGED\x1b[2J\xff.rsp", "x.c"}, sys.context());
    FAIL("an unreadable response file was passed on");
  } catch (const Error& e) {
    CHECK(e.is(ccshim::ResponseFileRefusal::unreadable));
    CHECK(e.code() == ExitCode::check_failed);  // gcc's exit 1 for the missing input
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    CHECK(what.find('\x1b') == std::string::npos);
    CHECK(what.find("linker input file not found") != std::string::npos);
  }
}

TEST_CASE("response files: a cycle is refused naming the file", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["loop.rsp"] = "-DX @loop.rsp";
  try {
    ccshim::expand_response_files({"@loop.rsp"}, sys.context());
    FAIL("no error for a self-including response file");
  } catch (const Error& e) {
    CHECK(e.is(ccshim::ResponseFileRefusal::too_many));
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).find("loop.rsp") != std::string::npos);
    CHECK(std::string(e.what()).find("too many @-files") != std::string::npos);  // gcc's words
  }
}

// Issue 11 item 14: gcc (libiberty) stops after 2000 expansions in all; a
// depth limit alone let 30 levels of files that each include the next twice
// run through 2^30 expansions.
TEST_CASE("response files: the total number of expansions is capped as gcc caps it", "[ccshim]") {
  FakeSystem sys;
  auto refusal = [&](const Args& args) -> std::optional<ReasonId> {
    try {
      ccshim::expand_response_files(args, sys.context());
    } catch (const Error& e) {
      return e.reason();
    }
    return std::nullopt;
  };
  for (int level = 0; level < 30; ++level)
    sys.response_files["f" + std::to_string(level)] = "@f" + std::to_string(level + 1) + " @f" +
                                                      std::to_string(level + 1);
  sys.response_files["f30"] = "-DLEAF";
  CHECK(refusal({"@f0"}) == ccshim::ResponseFileRefusal::too_many);
  // Deep but narrow nesting within the limit is fine, as in gcc (no depth limit of its own).
  for (int level = 0; level < 100; ++level)
    sys.response_files["d" + std::to_string(level)] = "-DL" + std::to_string(level) + " @d" + std::to_string(level + 1);
  sys.response_files["d100"] = "-DEND";
  auto out = ccshim::expand_response_files({"@d0"}, sys.context());
  CHECK(out.size() == 101);
  CHECK(out.back() == "-DEND");
  // 2000 expansions pass, the 2001st is refused.
  sys.response_files["one"] = "-DONE";
  Args many(ccshim::max_response_file_expansions, "@one");
  CHECK(ccshim::expand_response_files(many, sys.context()).size() == many.size());
  many.push_back("@one");
  CHECK(refusal(many) == ccshim::ResponseFileRefusal::too_many);
}

TEST_CASE("response files read from disk by the system context", "[ccshim]") {
  provkit::test::TempDir tmp("ccshim-rsp");
  const fs::path& dir = tmp.path;
  std::ofstream(dir / "a.rsp") << "-DFROM_DISK '-DQ=1 2'";
  auto out = ccshim::expand_response_files({"@" + (dir / "a.rsp").string()}, ccshim::system_context());
  CHECK(out == Args{"-DFROM_DISK", "-DQ=1 2"});
  // A directory is not readable as a file: gcc's missing input.
  CHECK_THROWS_WITH(ccshim::expand_response_files({"@" + dir.string()}, ccshim::system_context()),
                    Catch::Contains("linker input file not found"));
}

TEST_CASE("response file for zig: quoting as zig's reader reads it", "[ccshim]") {
  using ccshim::quote_for_zig_response_file;
  CHECK(quote_for_zig_response_file("plain") == std::optional<std::string>("\"plain\""));
  CHECK(quote_for_zig_response_file("a b\tc") == std::optional<std::string>("\"a b\tc\""));
  CHECK(quote_for_zig_response_file("-DS=\"x\"") == std::optional<std::string>("\"-DS=\\\"x\\\"\""));
  CHECK(quote_for_zig_response_file("a\\b") == std::optional<std::string>("\"a\\b\""));  // literal before a letter
  CHECK(quote_for_zig_response_file("a\\\"b") == std::optional<std::string>("\"a\\\\\\\"b\""));  // \" -> \\\"
  CHECK(quote_for_zig_response_file("end\\") == std::optional<std::string>("\"end\\\\\""));  // before the closing quote
  CHECK(quote_for_zig_response_file("#not-a-comment") == std::optional<std::string>("\"#not-a-comment\""));
  CHECK(quote_for_zig_response_file("") == std::optional<std::string>("\"\""));
  CHECK_FALSE(quote_for_zig_response_file("it's"));  // either quote toggles: a ' cannot be carried
}

TEST_CASE("response file for zig: only a command line too long for exec is packed", "[ccshim]") {
  std::vector<std::string> files;
  auto write = [&](const std::string& text) {
    files.push_back(text);
    return "/proc/self/fd/" + std::to_string(files.size() + 2);
  };
  Args small = {"-O2", "a.c"};
  CHECK(ccshim::pack_for_exec(small, write) == small);
  CHECK(files.empty());
  Args big = {"-target", "native-native-gnu.2.36"};
  for (int i = 0; i < 20000; ++i) big.push_back("obj/" + std::to_string(i) + ".o");
  big.push_back("-DQ='x'");  // zig's reader cannot carry it: stays on the command line, in place
  big.push_back("-o");
  big.push_back("out dir/lib.so");
  auto packed = ccshim::pack_for_exec(big, write);
  REQUIRE(files.size() == 2);
  CHECK(packed == Args{"@/proc/self/fd/3", "-DQ='x'", "@/proc/self/fd/4"});
  CHECK(files[0].rfind("\"-target\"\n\"native-native-gnu.2.36\"\n\"obj/0.o\"\n", 0) == 0);
  CHECK(files[1] == "\"-o\"\n\"out dir/lib.so\"\n");
}
