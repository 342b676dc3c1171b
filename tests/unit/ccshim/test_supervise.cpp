// cc-shim's supervision of zig: the linker's lines GNU ld would not print.
#include <catch2/catch.hpp>
#include <string_view>

#include "ccshim/ccshim.hpp"
#include "provkit/error.hpp"

#include "ccshim/fake_system.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace ccshim_test;

TEST_CASE("linker: lld's lines where GNU ld is silent", "[ccshim]") {
  using ccshim::silent_in_gnu_ld;
  CHECK(silent_in_gnu_ld(
      "ld.lld: warning: version script assignment of 'local' to symbol 'gz_intmax' failed: symbol not defined"));
  CHECK(silent_in_gnu_ld(
      "ld.lld: warning: version script assignment of 'V1' to symbol 'nosuch' failed: symbol not defined"));
  CHECK_FALSE(silent_in_gnu_ld("ld.lld: error: undefined symbol: main"));
  CHECK_FALSE(silent_in_gnu_ld(
      "x.c:1:1: warning: version script assignment of 'local' to symbol 'a' failed: symbol not defined"));
}
