// cc-shim's option tables: gcc's driver options, GNU ld's options through -Wl, and the warnings where gcc's
// defaults differ from clang's, asked directly (the translation's use of them is in test_translate.cpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ccshim/options.hpp"

using namespace provkit::ccshim;
using Args = std::vector<std::string>;

namespace {

const QuietWarning& quiet(std::string_view name) {
  auto all = quiet_warnings();
  auto it = std::find_if(all.begin(), all.end(), [&](const QuietWarning& w) { return w.name == name; });
  REQUIRE(it != all.end());
  return *it;
}

}  // namespace

TEST_CASE("options: gcc's table names each option once", "[ccshim][options]") {
  std::set<std::string_view> names;
  for (const auto& o : gcc_options()) {
    INFO(o.name);
    CHECK(names.insert(o.name).second);
  }
}

TEST_CASE("options: an option's value joined, separate or after a prefix", "[ccshim][options]") {
  Args args{"-DFOO=1", "-D", "BAR", "-o", "out", "-march=znver3", "-Wl,-rpath,/x", "-l:libcuda.so.1", "-o"};
  auto p = parse_one(args, 0);
  CHECK(is_option(p, "-D"));
  CHECK((p.value == "FOO=1" && !p.value_separate));
  p = parse_one(args, 1);
  CHECK((is_option(p, "-D") && p.value == "BAR" && p.value_separate));
  p = parse_one(args, 3);
  CHECK((is_option(p, "-o") && p.value == "out" && p.value_separate));
  p = parse_one(args, 5);
  CHECK((is_option(p, "-march=") && p.option->rule == Rule::cpu && p.value == "znver3"));
  p = parse_one(args, 6);
  CHECK((is_option(p, "-Wl,") && p.option->rule == Rule::linker && p.value == "-rpath,/x"));
  p = parse_one(args, 7);
  CHECK((is_option(p, "-l") && p.option->rule == Rule::library && p.value == ":libcuda.so.1"));
  p = parse_one(args, 8);  // a separate option last on the line: no value to take
  CHECK((is_option(p, "-o") && p.value.empty() && !p.value_separate));
}

TEST_CASE("options: exact names are not read as prefixes of others", "[ccshim][options]") {
  CHECK(is_option(parse_one({"-static-pie"}, 0), "-static-pie"));
  CHECK(is_option(parse_one({"-static"}, 0), "-static"));
  CHECK(is_option(parse_one({"-include", "x.h"}, 0), "-include"));
  CHECK(parse_one({"-uSYM"}, 0).option == nullptr);  // only the separate -u SYM is the shim's
  CHECK(parse_one({"-O2"}, 0).option == nullptr);    // passed on without being known
  CHECK(parse_one({"a.c"}, 0).option == nullptr);
  CHECK(parse_one({"-fuse-ld=lld"}, 0).option->rule == Rule::drop);
  CHECK(parse_one({"-mtune=generic"}, 0).option->rule == Rule::tune);
  CHECK(parse_one({"--target=aarch64-linux-gnu"}, 0).option->rule == Rule::target);
}

TEST_CASE("options: source files by gcc's suffixes", "[ccshim][options]") {
  for (const char* s : {"a.c", "a.cc", "a.cpp", "a.C", "x.S", "x.s", "y.i", "z.mm"}) CHECK(is_source_file(s));
  for (const char* s : {"a.o", "lib.so", "lib.a", "Makefile", "dir.c/x", "a.h"}) CHECK_FALSE(is_source_file(s));
}

TEST_CASE("options: GNU ld's options, their values, and those dropped", "[ccshim][options]") {
  const auto* rpath = find_linker_option("-rpath");
  REQUIRE(rpath);
  CHECK((rpath->takes_value && !rpath->drop));
  const auto* link = find_linker_option("--rpath-link");
  REQUIRE(link);
  CHECK((link->takes_value && link->drop));
  const auto* joined = find_linker_option("-rpath-link=/x");
  REQUIRE(joined);
  CHECK((joined->drop && !joined->takes_value));
  REQUIRE(find_linker_option("--threads=4"));
  CHECK(find_linker_option("--threads=4")->drop);
  CHECK(find_linker_option("--icf=all")->drop);
  CHECK(find_linker_option("--as-needed") == nullptr);
  CHECK(find_linker_option("-rpathx") == nullptr);
  CHECK(is_droppable_z_keyword("separate-code"));
  CHECK(is_droppable_z_keyword("pack-relative-relocs"));
  CHECK_FALSE(is_droppable_z_keyword("now"));
  CHECK_FALSE(is_droppable_z_keyword("relro"));
}

TEST_CASE("options: a quiet warning is asked for by its enablers or its own name", "[ccshim][options]") {
  const auto& sign = quiet("pointer-sign");
  CHECK(asks_for({"-Wall"}, sign));
  CHECK(asks_for({"-Wpointer-sign"}, sign));
  CHECK(asks_for({"-Werror=pointer-sign"}, sign));
  CHECK_FALSE(asks_for({"-Wextra", "x.c"}, sign));
  const auto& clang_only = quiet("string-plus-int");
  CHECK_FALSE(asks_for({"-Wall", "-Wextra"}, clang_only));
  CHECK(asks_for({"-Wstring-plus-int"}, clang_only));
  // gcc's -Wstrict-prototypes means less than clang's: its name does not ask for clang's.
  CHECK_FALSE(asks_for({"-Wstrict-prototypes"}, quiet("strict-prototypes")));
  bool has_int_conversion = false;
  for (auto w : warnings_not_errors()) has_int_conversion |= w == "int-conversion";
  CHECK(has_int_conversion);
}
