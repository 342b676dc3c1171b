// cc-shim's command line read once (ccshim/invocation.hpp): what every later step reads from it.
#include <elf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ccshim/ccshim.hpp"

#include "ccshim/fake_system.hpp"

using namespace provkit;
using namespace ccshim_test;
using ccshim::read_invocation;

TEST_CASE("invocation: where gcc stops, by its driver's order of -E, -fsyntax-only, -S, -c", "[ccshim]") {
  using ccshim::Mode;
  CHECK(read_invocation({"a.c", "-o", "a"}).mode == Mode::link);
  CHECK(read_invocation({"a.c", "-o", "a"}).links());
  CHECK(read_invocation({"-c", "a.c"}).mode == Mode::compile);
  CHECK(read_invocation({"-S", "-c", "a.c"}).mode == Mode::assemble);
  CHECK(read_invocation({"-c", "-fsyntax-only", "a.c"}).mode == Mode::syntax_only);
  for (const char* stop : {"-E", "-M", "-MM"}) {
    CHECK(read_invocation({"-c", stop, "a.c"}).mode == Mode::preprocess);
    CHECK_FALSE(read_invocation({stop, "a.c"}).links());
  }
  // An option's value is no option: `-o -c` names a file, `-MF -E` too.
  CHECK(read_invocation({"a.c", "-o", "-c"}).links());
  CHECK(read_invocation({"-MF", "-E", "a.c"}).links());
  CHECK(read_invocation({"-MD", "a.c"}).links());  // -MD writes deps beside a compile; it stops nothing
}

TEST_CASE("invocation: the inputs, each with the -x language in force where it stands", "[ccshim]") {
  auto inv = read_invocation({"-O2", "a.c", "-x", "c++", "b.inc", "-o", "out", "-x", "none", "c.S", "-", "-I", "inc",
                              "-Wl,-rpath,x", "libz.a"});
  REQUIRE(inv.inputs.size() == 5);
  CHECK(inv.inputs[0].path == "a.c");
  CHECK(inv.inputs[0].language.empty());
  CHECK(inv.inputs[1].path == "b.inc");
  CHECK(inv.inputs[1].language == "c++");
  CHECK(inv.inputs[2].path == "c.S");
  CHECK(inv.inputs[2].language == "none");
  CHECK(inv.inputs[3].path == "-");
  CHECK(inv.inputs[4].path == "libz.a");
}

TEST_CASE("invocation: the last -o and -MF, spelt apart or joined, with where their value stands", "[ccshim]") {
  auto inv = read_invocation({"-o", "first", "a.c", "-osecond", "-MF", "d1", "-MF", "d2"});
  CHECK(inv.output == std::optional<std::pair<std::size_t, std::string>>({3, "second"}));
  CHECK(inv.dependency_file == std::optional<std::pair<std::size_t, std::string>>({7, "d2"}));
  inv = read_invocation({"-c", "a.c", "-o", ""});
  CHECK(inv.output == std::optional<std::pair<std::size_t, std::string>>({3, ""}));
  CHECK_FALSE(read_invocation({"-c", "a.c"}).output);
  CHECK_FALSE(read_invocation({"-D", "-oops", "a.c"}).output);  // -D's value
  CHECK_FALSE(read_invocation({"a.c", "-o"}).output);           // gcc: "missing filename after '-o'"
}

TEST_CASE("invocation: facts about the whole command line, read from options and never from their values", "[ccshim]") {
  auto inv = read_invocation({"-m32", "-march=x86-64", "-fsanitize=address", "-static", "-nostdinc", "-Werror", "-fPIC",
                              "-Ofast", "-shared", "-L/a", "-L", "/b", "-frtti", "-dumpmachine", "a.c"});
  CHECK(inv.m32);
  CHECK(inv.names_cpu);
  CHECK(inv.sanitizes);
  CHECK(inv.static_link);
  CHECK(inv.no_std_includes);
  CHECK(inv.warnings_are_errors);
  CHECK(inv.chooses_pic);
  CHECK(inv.chooses_fp);
  CHECK(inv.no_pie_link);
  CHECK(inv.l_dirs == std::vector<std::filesystem::path>{"/a", "/b"});
  CHECK(inv.rtti == Args{"-frtti"});
  CHECK(inv.asks_dumpmachine);
  CHECK_FALSE(inv.names_target);
  CHECK(read_invocation({"--target=aarch64-linux-gnu"}).names_target);
  CHECK(read_invocation({"-target", "aarch64-linux-gnu"}).names_target);
  CHECK(read_invocation({"--sysroot=/sr"}).no_std_includes);
  CHECK(read_invocation({"-print-multiarch"}).asks_multiarch);
  // Every one of them as the value of an option that takes one: a file or a macro name, not the option.
  auto values = read_invocation({"-o", "-m32", "-D", "-static", "-MF", "-Werror", "-x", "-shared", "-include", "-fPIC",
                                 "-I", "-Ofast", "-MT", "-dumpmachine", "-o", "-target"});
  CHECK_FALSE(values.m32);
  CHECK_FALSE(values.static_link);
  CHECK_FALSE(values.warnings_are_errors);
  CHECK_FALSE(values.no_pie_link);
  CHECK_FALSE(values.chooses_pic);
  CHECK_FALSE(values.chooses_fp);
  CHECK_FALSE(values.asks_dumpmachine);
  CHECK_FALSE(values.names_target);
  CHECK(values.inputs.empty());
}

TEST_CASE("linker version: -Wl,--version asks for the linker's version, as meson asks", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["/r"] = "-Wl,--version";
  for (const Args& args : {Args{"-Wl,--version"}, Args{"-Wl,-O1,--version"}, Args{"-Xlinker", "--version"}, Args{"@/r"},
                           Args{"-m64", "-Wl,--version", "a.c"}})
    CHECK(ccshim::parse_invocation(args, sys.context()).asks_linker_version);
  for (const Args& args : {Args{"--version"}, Args{"-Wl,--version-script,v.map", "a.c"}, Args{"-o", "-Wl,--version"},
                           Args{"-Wl,-v"}, Args{"a.c"}})
    CHECK_FALSE(ccshim::parse_invocation(args, sys.context()).asks_linker_version);
}

TEST_CASE("invocation: response files are expanded once, and every step reads the expanded line from it", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["/outer.rsp"] = "-c @/inner.rsp -fno-rtti";
  sys.response_files["/inner.rsp"] = "-m32 -Wl,--version a.c";
  int reads = 0;
  auto ctx = sys.context();
  auto read = ctx.read_response_file;
  ctx.read_response_file = [&](const std::filesystem::path& p) {
    ++reads;
    return read(p);
  };
  auto inv = ccshim::parse_invocation({"@/outer.rsp", "-o", "a.o"}, ctx);
  CHECK(reads == 2);
  CHECK(inv.args == Args{"-c", "-m32", "-Wl,--version", "a.c", "-fno-rtti", "-o", "a.o"});
  // Every query takes the Invocation: none of them can read a response file again, so a context that can no
  // longer read one (a pipe already drained) changes no answer.
  ctx.read_response_file = [&](const std::filesystem::path&) -> std::optional<std::string> {
    ++reads;
    return std::nullopt;
  };
  sys.glibc = "2.36";
  CHECK(inv.asks_linker_version);
  CHECK_FALSE(inv.links());
  CHECK(ccshim::target_identity(inv, ctx.host) == i386);
  CHECK(ccshim::gcc_driver_warnings(inv, false) ==
        "cc1: warning: command-line option '-fno-rtti' is valid for C++/D/ObjC++ but not for C\n");
  CHECK(ccshim::shim_glibc(inv, ctx) == std::nullopt);  // -m32
  auto out = ccshim::translate(inv, ctx);
  CHECK(std::count(out.begin(), out.end(), "a.c") == 1);
  CHECK(std::count(out.begin(), out.end(), "-m32") == 1);
  CHECK(reads == 2);
}
