// cc-shim's translation of gcc's command line for zig, one rule per test case (docs/cc-shim.md has the
// reasons).
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ccshim/ccshim.hpp"
#include "ccshim/options.hpp"
#include "provkit/error.hpp"

#include "ccshim/fake_system.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace ccshim_test;

TEST_CASE("plain arguments pass through after -fno-sanitize=all", "[ccshim]") {
  FakeSystem sys;
  auto out = translated({"-O2", "-c", "a.c", "-o", "a.o", "-Wall", "-I/inc", "-DX=1"}, sys.context());
  CHECK(body(out) == Args{"-O2", "-c", "a.c", "-o", "a.o", "-Wall", "-I/inc", "-DX=1"});
  CHECK(sys.cache_reads == 0);  // no -l: -> ld.so.cache never read
}

TEST_CASE("sanitizers: -fno-sanitize=all is put first before the caller's arguments", "[ccshim]") {
  FakeSystem sys;
  auto out = translated({"-O0", "ub.c"}, sys.context());
  CHECK(out.front() == "-fno-sanitize=all");
  CHECK(body(out) == Args{"-O0", "ub.c"});
}

TEST_CASE("sanitizers: a caller that enables one gets no -fno-sanitize=all so its own wins", "[ccshim]") {
  FakeSystem sys;
  CHECK(without_defaults(translated({"-O0", "-fsanitize=undefined", "ub.c"}, sys.context())) ==
        Args{"-O0", "-fsanitize=undefined", "ub.c"});
  CHECK(translated({"-O0", "-fsanitize=undefined", "ub.c"}, sys.context()).front() != "-fno-sanitize=all");
  CHECK(without_defaults(translated({"-fsanitize=address,undefined", "x.c"}, sys.context())) ==
        Args{"-fsanitize=address,undefined", "x.c"});
  // turning sanitizers off is not enabling one
  CHECK(body(translated({"-fno-sanitize=undefined", "x.c"}, sys.context())) == Args{"-fno-sanitize=undefined", "x.c"});
  // -fsanitize-trap= and friends alone enable nothing
  CHECK(translated({"-fsanitize-trap=undefined", "x.c"}, sys.context()).front() == "-fno-sanitize=all");
}

TEST_CASE("exact library: -l:NAME resolves through the -L dirs in command-line order", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/first/libcuda.so.1"] = x86_64;
  sys.elves["/second/libcuda.so.1"] = x86_64;
  auto out = body(translated({"stub.c", "-l:libcuda.so.1", "-L/first", "-L", "/second"}, sys.context()));
  CHECK(out == Args{"stub.c", "/first/libcuda.so.1", "-L/first", "-L", "/second"});
  // -L dirs that follow the -l: count, as with ld; the separate `-L dir` form too
  sys.elves.erase("/first/libcuda.so.1");
  out = body(translated({"stub.c", "-l:libcuda.so.1", "-L/first", "-L", "/second"}, sys.context()));
  CHECK(out[1] == "/second/libcuda.so.1");
  CHECK(sys.cache_reads == 0);  // found before the cache was needed
}

TEST_CASE("exact library: -l :NAME (separate) resolves the same way", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/d/libfoo.so.2"] = x86_64;
  auto out = body(translated({"-l", ":libfoo.so.2", "-L/d", "m.c"}, sys.context()));
  CHECK(out == Args{"/d/libfoo.so.2", "-L/d", "m.c"});
}

TEST_CASE("exact library: a candidate of another ELF class or machine is skipped", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/lib/i386-linux-gnu/libcuda.so.1"] = i386;  // Triton passes such dirs first
  sys.elves["/usr/lib/arm/libcuda.so.1"] = aarch64;
  sys.elves["/real/libcuda.so.1"] = x86_64;
  auto out = body(translated({"-l:libcuda.so.1", "-L/lib/i386-linux-gnu", "-L/usr/lib/arm", "-L/real"}, sys.context()));
  CHECK(out[0] == "/real/libcuda.so.1");
  CHECK(sys.probed == Args{"/lib/i386-linux-gnu/libcuda.so.1", "/usr/lib/arm/libcuda.so.1", "/real/libcuda.so.1"});
}

TEST_CASE("exact library: a file that is not an ELF is not accepted", "[ccshim]") {
  FakeSystem sys;  // /d/libx.so exists as a linker script, say: probe says not ELF
  auto out = body(translated({"-l:libx.so", "-L/d"}, sys.context()));
  CHECK(out == Args{"-l:libx.so", "-L/d"});
}

TEST_CASE("exact library: LIBRARY_PATH then ld.so.cache then the default dirs", "[ccshim]") {
  FakeSystem sys;
  auto ctx = sys.context();
  ctx.library_path = {"/lp1", "/lp2"};
  sys.cache = {{"libcuda.so.1", "/cache32/libcuda.so.1"},
               {"libcuda.so.1", "/cache64/libcuda.so.1"},
               {"libother.so", "/cache64/libother.so"}};
  sys.elves["/cache32/libcuda.so.1"] = i386;
  sys.elves["/cache64/libcuda.so.1"] = x86_64;
  sys.elves["/usr/lib/libcuda.so.1"] = x86_64;

  SECTION("LIBRARY_PATH after the -L dirs") {
    sys.elves["/lp2/libcuda.so.1"] = x86_64;
    CHECK(body(translated({"-l:libcuda.so.1", "-L/none"}, ctx))[0] == "/lp2/libcuda.so.1");
    CHECK(sys.cache_reads == 0);
  }
  SECTION("the loader cache, by name and ELF identity, before the default dirs") {
    CHECK(body(translated({"-l:libcuda.so.1"}, ctx))[0] == "/cache64/libcuda.so.1");
    CHECK(sys.cache_reads == 1);
  }
  SECTION("the default dirs last") {
    sys.cache.clear();
    CHECK(body(translated({"-l:libcuda.so.1"}, ctx))[0] == "/usr/lib/libcuda.so.1");
    CHECK(sys.probed.back() == "/usr/lib/libcuda.so.1");
  }
  SECTION("the cache is read once for several -l:") {
    sys.elves["/cache64/libother.so"] = x86_64;
    auto out = body(translated({"-l:libcuda.so.1", "-l:libother.so"}, ctx));
    CHECK(out == Args{"/cache64/libcuda.so.1", "/cache64/libother.so"});
    CHECK(sys.cache_reads == 1);
  }
}

TEST_CASE("exact library: a name that cannot be resolved is passed through unchanged", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translated({"-l:libnope.so.1", "-L/d"}, sys.context())) == Args{"-l:libnope.so.1", "-L/d"});
  CHECK(body(translated({"-l", ":libnope.so.1"}, sys.context())) == Args{"-l", ":libnope.so.1"});
}

TEST_CASE("exact library: a relative -L dir gives an absolute path", "[ccshim]") {
  FakeSystem sys;
  sys.elves["build/libz.so.1"] = x86_64;
  auto out = body(translated({"-l:libz.so.1", "-Lbuild"}, sys.context()));
  CHECK(out[0] == (fs::current_path() / "build/libz.so.1").string());
}

TEST_CASE("exact library: ordinary -lNAME and -l NAME are left to zig", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translated({"-lm", "-l", "dl"}, sys.context())) == Args{"-lm", "-l", "dl"});
  CHECK(sys.probed.empty());
}

TEST_CASE("gcc spellings: -u SYM becomes a linker -u", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translated({"-u", "PyInit_x", "m.c"}, sys.context())) == Args{"-Wl,-u,PyInit_x", "m.c"});
  CHECK(body(translated({"-umain"}, sys.context())) == Args{"-umain"});  // zig reads the joined form right
  CHECK(body(translated({"-Xlinker", "-u", "-Xlinker", "s"}, sys.context())) ==
        Args{"-Xlinker", "-u", "-Xlinker", "s"});
}

TEST_CASE("gcc spellings: -march and -mcpu CPU names get zig's underscores", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translated({"-march=x86-64"}, sys.context())) == Args{"-march=x86_64"});
  CHECK(body(translated({"-march=x86-64-v3"}, sys.context())) == Args{"-march=x86_64_v3"});
  CHECK(body(translated({"-march=skylake-avx512"}, sys.context())) == Args{"-march=skylake_avx512"});
  CHECK(body(translated({"-mcpu=cortex-a72"}, sys.context())) == Args{"-mcpu=cortex_a72"});
  CHECK(body(translated({"-march=native"}, sys.context())) == Args{"-march=native"});
}

TEST_CASE("gcc spellings: any -mtune is dropped", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translated({"-mtune=generic", "-O2"}, sys.context())) == Args{"-O2"});
  CHECK(body(translated({"-mtune=haswell"}, sys.context())).empty());
}

TEST_CASE("linker options zig rejects and that change nothing are dropped", "[ccshim]") {
  FakeSystem sys;
  auto t = [&](const std::string& a) { return body(translated({a}, sys.context())); };
  for (const char* dropped : {"-Wl,-stats",
                              "-Wl,--stats",
                              "-Wl,--no-undefined-version",
                              "-Wl,--fatal-warnings",
                              "-Wl,--warn-common",
                              "-Wl,--enable-new-dtags",
                              "-Wl,-Bsymbolic-functions",
                              "-Wl,--no-add-needed",
                              "-Wl,--no-copy-dt-needed-entries",
                              "-Wl,--threads=4",
                              "-Wl,--no-threads",
                              "-Wl,-plugin-opt=O2",
                              "-Wl,--plugin-opt=mcpu=x",
                              "-Wl,--icf=all",
                              "-Wl,-rpath-link,/x",
                              "-Wl,-rpath-link=/x",
                              "-Wl,--rpath-link,/x",
                              "-Wl,-z,separate-code",
                              "-Wl,-z,noseparate-code",
                              "-Wl,-zseparate-code",
                              "-Wl,-z,combreloc",
                              "-Wl,-z,pack-relative-relocs"}) {
    INFO(dropped);
    CHECK(t(dropped).empty());
  }
}

TEST_CASE("linker options zig understands are kept in order", "[ccshim]") {
  FakeSystem sys;
  auto t = [&](const std::string& a) { return body(translated({a}, sys.context())); };
  CHECK(t("-Wl,-O1,--sort-common,--as-needed,-z,relro,-z,now") ==
        Args{"-Wl,-O1,--sort-common,--as-needed,-z,relro,-z,now"});
  CHECK(t("-Wl,-O1,-Bsymbolic-functions,-z,relro") == Args{"-Wl,-O1,-z,relro"});
  CHECK(t("-Wl,-z,separate-code,-z,now") == Args{"-Wl,-z,now"});
  CHECK(t("-Wl,-rpath-link,/a,-rpath,/b") == Args{"-Wl,-rpath,/b"});
  // zig's own error stays for options that change the output
  CHECK(t("-Wl,--disable-new-dtags") == Args{"-Wl,--disable-new-dtags"});
  CHECK(t("-Wl,--exclude-libs,ALL") == Args{"-Wl,--exclude-libs,ALL"});
}

TEST_CASE("preprocessor dependency options in -Wp become driver options", "[ccshim]") {
  FakeSystem sys;
  auto t = [&](const std::string& a) { return body(translated({"-c", "a.c", a}, sys.context())); };
  CHECK(t("-Wp,-MD,.a.o.d") == Args{"-c", "a.c", "-MD", "-MF", ".a.o.d"});
  CHECK(t("-Wp,-MMD,a.d,-MT,a.o") == Args{"-c", "a.c", "-MMD", "-MF", "a.d", "-MT", "a.o"});
  CHECK(t("-Wp,-D_FORTIFY_SOURCE=2") == Args{"-c", "a.c", "-Wp,-D_FORTIFY_SOURCE=2"});
  CHECK(t("-Wp,-MD,a.d,-DX") == Args{"-c", "a.c", "-MD", "-MF", "a.d", "-Wp,-DX"});
}

TEST_CASE("gcc-only flags clang rejects or ignores are dropped", "[ccshim]") {
  FakeSystem sys;
  for (const char* dropped : {"-fno-gnu-unique", "-fvar-tracking", "-fno-var-tracking", "-fvar-tracking-assignments",
                              "-fno-var-tracking-assignments", "-fipa-pta", "-fno-ipa-pta", "-flto-partition=none",
                              "-static-libgcc", "-shared-libgcc", "-static-libstdc++", "-fuse-ld=gold"}) {
    INFO(dropped);
    CHECK(body(translated({dropped, "x.c"}, sys.context())) == Args{"x.c"});
  }
}

TEST_CASE("values of options taking a separate argument are never translated", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translated({"-o", "-mtune=x", "-D", "-u", "-I", "-lgcc", "-x", "-Wl,-stats"}, sys.context())) ==
        Args{"-o", "-mtune=x", "-D", "-u", "-I", "-lgcc", "-x", "-Wl,-stats"});
}

TEST_CASE("the gcc spellings zig already reads right are not touched", "[ccshim]") {
  FakeSystem sys;
  Args fine = {"-pthread",
               "-Wl,--as-needed",
               "-fstack-clash-protection",
               "-fcf-protection",
               "-Wp,-D_FORTIFY_SOURCE=2",
               "-lgcc_s",
               "-e",
               "start",
               "--target=x86_64-linux-gnu",
               "-fno-semantic-interposition",
               "-Wl,-z,relro",
               "-Wl,-O1",
               "-Wl,--hash-style=gnu",
               "-g3",
               "-gsplit-dwarf",
               "-march=native"};
  CHECK(body(translated(fine, sys.context())) == fine);
}

TEST_CASE("gcc defaults: PIE code and a PIE executable, as Debian's gcc", "[ccshim]") {
  FakeSystem sys;
  auto has = [](const Args& out, const std::string& a) { return std::count(out.begin(), out.end(), a); };
  auto out = translated({"w.c", "-o", "w"}, sys.context());
  CHECK(has(out, "-fPIE") == 1);
  CHECK(has(out, "-pie") == 1);
  // The defaults go before the caller's arguments.
  CHECK(std::find(out.begin(), out.end(), "-pie") < std::find(out.begin(), out.end(), "w.c"));
  // No link: PIE code only.
  for (const Args& args : {Args{"-c", "w.c"}, Args{"-S", "w.c"}, Args{"-E", "w.c"}, Args{"-M", "w.c"},
                           Args{"-MM", "w.c"}, Args{"-fsyntax-only", "w.c"}}) {
    out = translated(args, sys.context());
    CHECK(has(out, "-fPIE") == 1);
    CHECK(has(out, "-pie") == 0);
  }
  // gcc's specs: %{static|shared|r:;!no-pie:-pie}
  for (const Args& args : {Args{"-shared", "w.c"}, Args{"-r", "w.o"}, Args{"-static", "w.c"}, Args{"-no-pie", "w.c"}}) {
    out = translated(args, sys.context());
    CHECK(has(out, "-pie") == 0);
    CHECK(has(out, "-fPIE") == 1);
  }
  // The caller's own code model is theirs.
  for (std::string model : {"-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-PIC", "-fno-pic", "-fno-PIE", "-fno-pie"}) {
    out = translated({model, "-c", "w.c"}, sys.context());
    CHECK(has(out, "-fPIE") == (model == "-fPIE" ? 1 : 0));
    CHECK(has(out, model) == 1);
  }
}

TEST_CASE("gcc defaults: no _DEBUG (zig defines it without -O), unless the caller defines it", "[ccshim]") {
  FakeSystem sys;
  auto out = translated({"w.c"}, sys.context());
  auto undef = std::find(out.begin(), out.end(), "-U_DEBUG");
  REQUIRE(undef != out.end());
  CHECK(undef < std::find(out.begin(), out.end(), "w.c"));
  out = translated({"-D_DEBUG", "w.c"}, sys.context());
  CHECK(std::find(out.begin(), out.end(), "-U_DEBUG") < std::find(out.begin(), out.end(), "-D_DEBUG"));
}

TEST_CASE("gcc option -Wl,-rpath DIR: a linker option's value as gcc's next argument is paired as ld pairs it",
          "[ccshim]") {
  FakeSystem sys;
  auto t = [&](const Args& a) { return body(translated(a, sys.context())); };
  // triton-cpu's build.py spelling
  CHECK(t({"-Wl,-rpath", "/opt/lib", "m.c"}) == Args{"-Wl,-rpath", "-Xlinker", "/opt/lib", "m.c"});
  CHECK(t({"-Wl,--as-needed,-soname", "libx.so.1"}) == Args{"-Wl,--as-needed,-soname", "-Xlinker", "libx.so.1"});
  CHECK(t({"-Xlinker", "-rpath", "/opt/lib"}) == Args{"-Xlinker", "-rpath", "-Xlinker", "/opt/lib"});
  // the forms zig already pairs are unchanged
  CHECK(t({"-Wl,-rpath,/a"}) == Args{"-Wl,-rpath,/a"});
  CHECK(t({"-Wl,-rpath", "-Wl,/a"}) == Args{"-Wl,-rpath", "-Wl,/a"});
  CHECK(t({"-Xlinker", "-rpath", "-Xlinker", "/a"}) == Args{"-Xlinker", "-rpath", "-Xlinker", "/a"});
  // a dropped option loses its value wherever that comes
  CHECK(t({"-Wl,-rpath-link", "/a", "m.c"}) == Args{"m.c"});
  CHECK(t({"-Wl,-rpath-link", "-Wl,/a"}).empty());
  CHECK(t({"-Xlinker", "-rpath-link", "-Xlinker", "/a"}).empty());
  // a source file is compiled, never taken as the value
  CHECK(t({"-Wl,-rpath", "m.c"}) == Args{"-Wl,-rpath", "m.c"});
  // -Xlinker items go through the same table as -Wl, ones
  CHECK(t({"-Xlinker", "-Bsymbolic-functions", "-Xlinker", "-z", "-Xlinker", "now"}) ==
        Args{"-Xlinker", "-z", "-Xlinker", "now"});
}

TEST_CASE("gcc option -lgcc and -lgcc_eh are dropped: zig links its compiler_rt and libunwind", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translated({"-lgcc", "-l", "gcc", "-lgcc_eh", "-lgcc_s", "-lm"}, sys.context())) ==
        Args{"-lgcc_s", "-lm"});
}

TEST_CASE("gcc option -lNAME: a library of another class first in the -L dirs is skipped as GNU ld skips it",
          "[ccshim]") {
  FakeSystem sys;
  sys.elves["/lib/i386-linux-gnu/libfoo.so"] = i386;
  sys.elves["/l64/libfoo.so"] = x86_64;
  auto t = [&](const Args& a) { return body(translated(a, sys.context())); };
  CHECK(t({"m.c", "-lfoo", "-L/lib/i386-linux-gnu", "-L/l64"}) ==
        Args{"m.c", "/l64/libfoo.so", "-L/lib/i386-linux-gnu", "-L/l64"});
  CHECK(t({"m.c", "-l", "foo", "-L/lib/i386-linux-gnu", "-L/l64"})[1] == "/l64/libfoo.so");
  // No decoy ahead: left to zig, which finds the same file.
  CHECK(t({"-lfoo", "-L/l64", "-L/lib/i386-linux-gnu"}) == Args{"-lfoo", "-L/l64", "-L/lib/i386-linux-gnu"});
  // An archive or linker script (not an ELF) is what ld takes: nothing to skip.
  sys.other_files.insert("/scripts/libfoo.so");
  CHECK(t({"-lfoo", "-L/scripts", "-L/lib/i386-linux-gnu"}) == Args{"-lfoo", "-L/scripts", "-L/lib/i386-linux-gnu"});
  // Past the decoy, the next dir's archive when that comes first.
  sys.other_files.insert("/a/libfoo.a");
  CHECK(t({"-lfoo", "-L/lib/i386-linux-gnu", "-L/a", "-L/l64"})[0] == "/a/libfoo.a");
  // -static and -Wl,-Bstatic: only archives count, so the .so decoy is not in the way.
  CHECK(t({"-static", "-lfoo", "-L/lib/i386-linux-gnu", "-L/a"}) ==
        Args{"-static", "-lfoo", "-L/lib/i386-linux-gnu", "-L/a"});
  CHECK(t({"-Wl,-Bstatic", "-lfoo", "-Wl,-Bdynamic", "-lfoo", "-L/lib/i386-linux-gnu", "-L/a"}) ==
        Args{"-Wl,-Bstatic", "-lfoo", "-Wl,-Bdynamic", "/a/libfoo.a", "-L/lib/i386-linux-gnu", "-L/a"});
  // Only a decoy anywhere: zig's (lld's) own error stays.
  CHECK(t({"-lfoo", "-L/lib/i386-linux-gnu"}) == Args{"-lfoo", "-L/lib/i386-linux-gnu"});
  // For a 32-bit target the 64-bit one is the decoy.
  CHECK(t({"-m32", "-lfoo", "-L/l64", "-L/lib/i386-linux-gnu"})[1] == "/lib/i386-linux-gnu/libfoo.so");
}

TEST_CASE("warnings: clang's defaults that gcc does not give are turned off after the caller's flags", "[ccshim]") {
  FakeSystem sys;
  auto has = [](const Args& out, const std::string& a) { return std::find(out.begin(), out.end(), a) != out.end(); };
  auto out = translated({"-O3", "-shared", "-fPIC", "-Wno-psabi", "stub.c"}, sys.context());
  CHECK(has(out, "-Wno-pointer-sign"));  // Triton's launcher stub
  CHECK(has(out, "-Wno-unknown-warning-option"));
  CHECK(std::find(out.begin(), out.end(), "-Wno-pointer-sign") > std::find(out.begin(), out.end(), "stub.c"));
  // gcc errors that are warnings in gcc 12 stay warnings
  CHECK(has(out, "-Wno-error=implicit-function-declaration"));
  CHECK(std::find(out.begin(), out.end(), "-Wno-error=int-conversion") < std::find(out.begin(), out.end(), "stub.c"));
  // -Wall asks for gcc's -Wpointer-sign, -Wparentheses...; clang-only ones stay off
  out = translated({"-Wall", "x.c"}, sys.context());
  CHECK_FALSE(has(out, "-Wno-pointer-sign"));
  CHECK_FALSE(has(out, "-Wno-parentheses"));
  CHECK(has(out, "-Wno-parentheses-equality"));
  CHECK(has(out, "-Wno-string-plus-int"));
  // the warning itself, or as an error, by name
  CHECK_FALSE(has(translated({"-Wpointer-sign", "x.c"}, sys.context()), "-Wno-pointer-sign"));
  CHECK_FALSE(has(translated({"-Werror=pointer-sign", "x.c"}, sys.context()), "-Wno-pointer-sign"));
  CHECK(has(translated({"-pedantic", "x.c"}, sys.context()), "-Wno-parentheses"));
  CHECK_FALSE(has(translated({"-pedantic", "x.c"}, sys.context()), "-Wno-pointer-sign"));
  // clang-only ones stay off whatever -W set asks (zlib's K&R code, pixman's -Wall extras)
  for (const auto& w : {"-Wno-deprecated-non-prototype", "-Wno-sometimes-uninitialized", "-Wno-self-assign"}) {
    CHECK(has(translated({"-Wall", "-Wextra", "x.c"}, sys.context()), w));
  }
  // gcc's -Wstrict-prototypes is not clang's: off even when named (json-c's -Werror build)
  CHECK(has(translated({"-Werror", "-Wstrict-prototypes", "x.c"}, sys.context()), "-Wno-strict-prototypes"));
  // gcc gives it under -Wextra: then asked for
  CHECK(has(translated({"-Wall", "x.c"}, sys.context()), "-Wno-expansion-to-defined"));
  CHECK_FALSE(has(translated({"-Wextra", "x.c"}, sys.context()), "-Wno-expansion-to-defined"));
  CHECK(has(translated({"-Wall", "x.c"}, sys.context()), "-Wno-absolute-value"));  // pixman's matrix-test
  CHECK_FALSE(has(translated({"-Wextra", "x.c"}, sys.context()), "-Wno-absolute-value"));
  CHECK_FALSE(has(translated({"-Wabsolute-value", "x.c"}, sys.context()), "-Wno-absolute-value"));
  CHECK_FALSE(has(translated({"-Wsometimes-uninitialized", "x.c"}, sys.context()), "-Wno-sometimes-uninitialized"));
  CHECK(ccshim::warnings_mirror_gcc.starts_with("12."));
  // -Werror: gcc 12 makes those warnings errors too
  CHECK_FALSE(has(translated({"-Werror", "x.c"}, sys.context()), "-Wno-error=implicit-function-declaration"));
}

TEST_CASE("output: the -o and -MF values as gcc takes them", "[ccshim]") {
  using Found = std::optional<std::pair<std::size_t, std::string>>;
  CHECK(ccshim::last_option_value({"-c", "a.c", "-o", "a.o"}, "-o") == Found({3, "a.o"}));
  CHECK(ccshim::last_option_value({"-o/dev/null", "a.c"}, "-o") == Found({0, "/dev/null"}));
  CHECK(ccshim::last_option_value({"-o", "x", "-o", "y"}, "-o") == Found({3, "y"}));  // the last one
  CHECK(ccshim::last_option_value({"-D", "-o", "a.c"}, "-o") == std::nullopt);        // a -D value
  CHECK(ccshim::last_option_value({"a.c"}, "-o") == std::nullopt);
  CHECK(ccshim::last_option_value({"-MD", "-MF", "a.d", "-c", "a.c"}, "-MF") == Found({2, "a.d"}));
  CHECK(ccshim::last_option_value({"-MFdeps/a.d", "-MF", "b.d", "-c", "a.c"}, "-MF") == Found({2, "b.d"}));
  CHECK(ccshim::last_option_value({"-MFdeps/a.d", "-c", "a.c", "-o", "a.o"}, "-MF") == Found({0, "deps/a.d"}));
  CHECK(ccshim::last_option_value({"-c", "a.c", "-o", "a.o"}, "-MF") == std::nullopt);
}
