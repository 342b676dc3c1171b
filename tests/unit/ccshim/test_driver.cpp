// What gcc's driver says itself where the shim speaks for it (ccshim/driver.hpp): the self-queries it
// answers, and cc1's warnings about C++-only options on a C compile.
#include <elf.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ccshim/ccshim.hpp"

#include "ccshim/fake_system.hpp"

using namespace provkit;
using namespace ccshim_test;
using ccshim::read_invocation;

TEST_CASE("gcc option -dumpmachine and -print-multiarch are answered with the multiarch triple", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  CHECK(ccshim::answer_query(read_invocation({"-dumpmachine"}), sys.context()) ==
        std::optional<std::string>("x86_64-linux-gnu\n"));
  CHECK(ccshim::answer_query(read_invocation({"-m32", "-dumpmachine"}), sys.context()) ==
        std::optional<std::string>("x86_64-linux-gnu\n"));
  CHECK(ccshim::answer_query(read_invocation({"-m32", "-print-multiarch"}), sys.context()) ==
        std::optional<std::string>("i386-linux-gnu\n"));
  CHECK_FALSE(ccshim::answer_query(read_invocation({"-c", "a.c"}), sys.context()));
  CHECK_FALSE(ccshim::answer_query(read_invocation({"--target=aarch64-linux-gnu", "-dumpmachine"}), sys.context()));
  CHECK_FALSE(ccshim::answer_query(read_invocation({"-o", "-dumpmachine", "a.c"}), sys.context()));  // a file name
  sys.glibc.reset();
  CHECK_FALSE(ccshim::answer_query(read_invocation({"-dumpmachine"}), sys.context()));
}

TEST_CASE("driver warnings: -fno-rtti and -frtti on a C compile get cc1's warning, once per C source", "[ccshim]") {
  const std::string no_rtti = "cc1: warning: command-line option '-fno-rtti' is valid for C++/D/ObjC++ but not for C\n";
  const std::string rtti = "cc1: warning: command-line option '-frtti' is valid for C++/D/ObjC++ but not for C\n";
  auto warnings = [](const Args& args, bool cxx = false) {
    return ccshim::gcc_driver_warnings(read_invocation(args), cxx);
  };
  CHECK(warnings({"-fno-rtti", "-c", "conftest.c"}) == no_rtti);  // libtool's probe
  CHECK(warnings({"-fno-rtti", "-frtti", "a.c", "b.c"}) == no_rtti + rtti + no_rtti + rtti);
  CHECK(warnings({"-fno-rtti", "-c", "conftest.c"}, true).empty());  // zig c++: valid
  CHECK(warnings({"-fno-rtti", "-x", "c++", "a.c"}).empty());
  CHECK(warnings({"-fno-rtti", "-x", "c", "a.cpp"}) == no_rtti);
  CHECK(warnings({"-fno-rtti", "-x", "c", "-"}) == no_rtti);  // stdin is C only when -x says so
  CHECK(warnings({"-fno-rtti", "-"}).empty());
  CHECK(warnings({"-fno-rtti", "-x", "none", "a.c", "b.cc"}) == no_rtti);
  CHECK(warnings({"-fno-rtti", "a.o", "-o", "x.c"}).empty());  // an -o value is no source
  CHECK(warnings({"-c", "a.c"}).empty());
}
