// cc-shim's translation, one rule per test case (docs/cc-shim.md has the reasons).
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnu/libc-version.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "provkit/ccshim/ccshim.hpp"
#include "provkit/ccshim/options.hpp"
#include "provkit/error.hpp"

#include "support/temp_dir.hpp"

using namespace provkit;
using ccshim::translate;
using Args = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

const elf::Identity x86_64{ELFCLASS64, EM_X86_64, ET_DYN};
const elf::Identity i386{ELFCLASS32, EM_386, ET_DYN};
const elf::Identity aarch64{ELFCLASS64, EM_AARCH64, ET_DYN};

// A file system of ELF files and response files, and counters to see what
// the translation looked at.
struct FakeSystem {
  std::map<std::string, elf::Identity> elves;
  std::map<std::string, std::string> response_files;
  std::set<std::string> other_files;  // regular files that are not ELF (archives, linker scripts)
  std::vector<elf::CacheEntry> cache;
  std::vector<std::string> probed;
  std::optional<std::string> glibc;  // the host's glibc; none unless a test says so
  int cache_reads = 0;
  int glibc_reads = 0;

  ccshim::SearchContext context() {
    ccshim::SearchContext ctx;
    ctx.host = x86_64;
    ctx.default_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib"};
    ctx.ld_so_cache = [this] {
      ++cache_reads;
      return cache;
    };
    ctx.probe = [this](const fs::path& p) -> std::optional<elf::Identity> {
      probed.push_back(p.string());
      auto it = elves.find(p.string());
      if (it == elves.end()) return std::nullopt;
      return it->second;
    };
    ctx.is_regular_file = [this](const fs::path& p) {
      return elves.count(p.string()) > 0 || other_files.count(p.string()) > 0;
    };
    ctx.read_response_file = [this](const fs::path& p) -> std::optional<std::string> {
      auto it = response_files.find(p.string());
      if (it == response_files.end()) return std::nullopt;
      return it->second;
    };
    ctx.glibc_version = [this] {
      ++glibc_reads;
      return glibc;
    };
    return ctx;
  }
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// What the shim puts after -Wno-error=... on every command line (gcc's
// defaults: no _DEBUG, PIE code, a PIE link) when the command line does not
// say otherwise.
bool is_gcc_default(const std::string& a) {
  return a == "-U_DEBUG" || a == "-UNDEBUG" || a == "-ffp-exception-behavior=maytrap" || a == "-fPIE" || a == "-pie";
}

// The translation minus what the shim adds around every command line (the
// leading -fno-sanitize=all, -Wno-error=... and gcc's defaults, the trailing
// -Wno-...), for rules that are not about those.
Args body(const Args& out) {
  REQUIRE(!out.empty());
  REQUIRE(out.front() == "-fno-sanitize=all");
  auto first = out.begin() + 1;
  while (first != out.end() && starts_with(*first, "-Wno-error=")) ++first;
  while (first != out.end() && is_gcc_default(*first)) ++first;
  auto last = out.end();
  while (last != first && starts_with(*(last - 1), "-Wno-")) --last;
  return Args(first, last);
}

// What the shim adds around the caller's arguments, without a glibc target.
Args without_defaults(const Args& out) {
  Args kept;
  for (const auto& a : out)
    if (a != "-fno-sanitize=all" && !starts_with(a, "-Wno-") && !is_gcc_default(a)) kept.push_back(a);
  return kept;
}

}  // namespace

TEST_CASE("plain arguments pass through after -fno-sanitize=all", "[ccshim]") {
  FakeSystem sys;
  auto out = translate({"-O2", "-c", "a.c", "-o", "a.o", "-Wall", "-I/inc", "-DX=1"}, sys.context());
  CHECK(body(out) == Args{"-O2", "-c", "a.c", "-o", "a.o", "-Wall", "-I/inc", "-DX=1"});
  CHECK(sys.cache_reads == 0);  // no -l: -> ld.so.cache never read
}

TEST_CASE("sanitizers: -fno-sanitize=all is put first before the caller's arguments", "[ccshim]") {
  FakeSystem sys;
  auto out = translate({"-O0", "ub.c"}, sys.context());
  CHECK(out.front() == "-fno-sanitize=all");
  CHECK(body(out) == Args{"-O0", "ub.c"});
}

TEST_CASE("sanitizers: a caller that enables one gets no -fno-sanitize=all so its own wins", "[ccshim]") {
  FakeSystem sys;
  CHECK(without_defaults(translate({"-O0", "-fsanitize=undefined", "ub.c"}, sys.context())) ==
        Args{"-O0", "-fsanitize=undefined", "ub.c"});
  CHECK(translate({"-O0", "-fsanitize=undefined", "ub.c"}, sys.context()).front() != "-fno-sanitize=all");
  CHECK(without_defaults(translate({"-fsanitize=address,undefined", "x.c"}, sys.context())) ==
        Args{"-fsanitize=address,undefined", "x.c"});
  // turning sanitizers off is not enabling one
  CHECK(body(translate({"-fno-sanitize=undefined", "x.c"}, sys.context())) == Args{"-fno-sanitize=undefined", "x.c"});
  // -fsanitize-trap= and friends alone enable nothing
  CHECK(translate({"-fsanitize-trap=undefined", "x.c"}, sys.context()).front() == "-fno-sanitize=all");
}

TEST_CASE("exact library: -l:NAME resolves through the -L dirs in command-line order", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/first/libcuda.so.1"] = x86_64;
  sys.elves["/second/libcuda.so.1"] = x86_64;
  auto out = body(translate({"stub.c", "-l:libcuda.so.1", "-L/first", "-L", "/second"}, sys.context()));
  CHECK(out == Args{"stub.c", "/first/libcuda.so.1", "-L/first", "-L", "/second"});
  // -L dirs that follow the -l: count, as with ld; the separate `-L dir` form too
  sys.elves.erase("/first/libcuda.so.1");
  out = body(translate({"stub.c", "-l:libcuda.so.1", "-L/first", "-L", "/second"}, sys.context()));
  CHECK(out[1] == "/second/libcuda.so.1");
  CHECK(sys.cache_reads == 0);  // found before the cache was needed
}

TEST_CASE("exact library: -l :NAME (separate) resolves the same way", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/d/libfoo.so.2"] = x86_64;
  auto out = body(translate({"-l", ":libfoo.so.2", "-L/d", "m.c"}, sys.context()));
  CHECK(out == Args{"/d/libfoo.so.2", "-L/d", "m.c"});
}

TEST_CASE("exact library: a candidate of another ELF class or machine is skipped", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/lib/i386-linux-gnu/libcuda.so.1"] = i386;  // Triton passes such dirs first
  sys.elves["/usr/lib/arm/libcuda.so.1"] = aarch64;
  sys.elves["/real/libcuda.so.1"] = x86_64;
  auto out = body(translate({"-l:libcuda.so.1", "-L/lib/i386-linux-gnu", "-L/usr/lib/arm", "-L/real"}, sys.context()));
  CHECK(out[0] == "/real/libcuda.so.1");
  CHECK(sys.probed == Args{"/lib/i386-linux-gnu/libcuda.so.1", "/usr/lib/arm/libcuda.so.1", "/real/libcuda.so.1"});
}

TEST_CASE("exact library: a file that is not an ELF is not accepted", "[ccshim]") {
  FakeSystem sys;  // /d/libx.so exists as a linker script, say: probe says not ELF
  auto out = body(translate({"-l:libx.so", "-L/d"}, sys.context()));
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
    CHECK(body(translate({"-l:libcuda.so.1", "-L/none"}, ctx))[0] == "/lp2/libcuda.so.1");
    CHECK(sys.cache_reads == 0);
  }
  SECTION("the loader cache, by name and ELF identity, before the default dirs") {
    CHECK(body(translate({"-l:libcuda.so.1"}, ctx))[0] == "/cache64/libcuda.so.1");
    CHECK(sys.cache_reads == 1);
  }
  SECTION("the default dirs last") {
    sys.cache.clear();
    CHECK(body(translate({"-l:libcuda.so.1"}, ctx))[0] == "/usr/lib/libcuda.so.1");
    CHECK(sys.probed.back() == "/usr/lib/libcuda.so.1");
  }
  SECTION("the cache is read once for several -l:") {
    sys.elves["/cache64/libother.so"] = x86_64;
    auto out = body(translate({"-l:libcuda.so.1", "-l:libother.so"}, ctx));
    CHECK(out == Args{"/cache64/libcuda.so.1", "/cache64/libother.so"});
    CHECK(sys.cache_reads == 1);
  }
}

TEST_CASE("exact library: a name that cannot be resolved is passed through unchanged", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translate({"-l:libnope.so.1", "-L/d"}, sys.context())) == Args{"-l:libnope.so.1", "-L/d"});
  CHECK(body(translate({"-l", ":libnope.so.1"}, sys.context())) == Args{"-l", ":libnope.so.1"});
}

TEST_CASE("exact library: a relative -L dir gives an absolute path", "[ccshim]") {
  FakeSystem sys;
  sys.elves["build/libz.so.1"] = x86_64;
  auto out = body(translate({"-l:libz.so.1", "-Lbuild"}, sys.context()));
  CHECK(out[0] == (fs::current_path() / "build/libz.so.1").string());
}

TEST_CASE("exact library: ordinary -lNAME and -l NAME are left to zig", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translate({"-lm", "-l", "dl"}, sys.context())) == Args{"-lm", "-l", "dl"});
  CHECK(sys.probed.empty());
}

TEST_CASE("exact library: the target's ELF identity follows -m32 and -target/--target=", "[ccshim]") {
  CHECK(ccshim::target_identity({"-O2"}, x86_64) == x86_64);
  CHECK(ccshim::target_identity({"-m32"}, x86_64).elf_class == ELFCLASS32);
  CHECK(ccshim::target_identity({"-m32"}, x86_64).machine == EM_386);
  CHECK(ccshim::target_identity({"-m32", "-m64"}, x86_64) == x86_64);
  CHECK(ccshim::target_identity({"-target", "aarch64-linux-gnu"}, x86_64).machine == EM_AARCH64);
  CHECK(ccshim::target_identity({"--target=i686-linux-gnu"}, x86_64).machine == EM_386);
  CHECK(ccshim::target_identity({"--target=mystery-thing"}, x86_64) == x86_64);

  FakeSystem sys;
  sys.elves["/l32/libcuda.so.1"] = i386;
  sys.elves["/l64/libcuda.so.1"] = x86_64;
  CHECK(body(translate({"-m32", "-l:libcuda.so.1", "-L/l64", "-L/l32"}, sys.context()))[1] == "/l32/libcuda.so.1");
}

TEST_CASE("response files are expanded before anything else", "[ccshim]") {
  FakeSystem sys;
  sys.elves["/d/libcuda.so.1"] = x86_64;
  sys.response_files["args.rsp"] = "-l:libcuda.so.1 -L/d\n-u sym";
  auto out = body(translate({"-O2", "@args.rsp", "x.c"}, sys.context()));
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

TEST_CASE("response files: an unreadable one stays as it is and an empty one vanishes", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["empty.rsp"] = " \n ";
  CHECK(ccshim::expand_response_files({"@missing.rsp", "@empty.rsp", "@"}, sys.context()) == Args{"@missing.rsp", "@"});
}

TEST_CASE("response files: a cycle is refused naming the file", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["loop.rsp"] = "-DX @loop.rsp";
  try {
    ccshim::expand_response_files({"@loop.rsp"}, sys.context());
    FAIL("no error for a self-including response file");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).find("loop.rsp") != std::string::npos);
    CHECK(std::string(e.what()).find("too many @-files") != std::string::npos);
  }
}

// Issue 11 item 14: gcc (libiberty) stops after 2000 expansions in all; a
// depth limit alone let 30 levels of files that each include the next twice
// run through 2^30 expansions.
TEST_CASE("response files: the total number of expansions is capped as gcc caps it", "[ccshim]") {
  FakeSystem sys;
  for (int level = 0; level < 30; ++level)
    sys.response_files["f" + std::to_string(level)] = "@f" + std::to_string(level + 1) + " @f" +
                                                      std::to_string(level + 1);
  sys.response_files["f30"] = "-DLEAF";
  CHECK_THROWS_WITH(ccshim::expand_response_files({"@f0"}, sys.context()), Catch::Contains("too many @-files"));
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
  CHECK_THROWS_WITH(ccshim::expand_response_files(many, sys.context()), Catch::Contains("more than 2000"));
}

TEST_CASE("response files read from disk by the system context", "[ccshim]") {
  provkit::test::TempDir tmp("ccshim-rsp");
  const fs::path& dir = tmp.path;
  std::ofstream(dir / "a.rsp") << "-DFROM_DISK '-DQ=1 2'";
  auto out = ccshim::expand_response_files({"@" + (dir / "a.rsp").string(), "@" + dir.string()},
                                           ccshim::system_context());
  CHECK(out == Args{"-DFROM_DISK", "-DQ=1 2", "@" + dir.string()});  // a directory is not readable as a file
}

TEST_CASE("response files: each file is read once per run, a pipe's arguments kept for every later use", "[ccshim]") {
  int reads = 0;
  auto once = ccshim::read_each_file_once([&](const fs::path& p) -> std::optional<std::string> {
    ++reads;
    if (p == "gone") return std::nullopt;
    return reads == 1 ? std::optional<std::string>("-DNDEBUG") : std::nullopt;  // a pipe: empty after one read
  });
  CHECK(once("/dev/fd/63") == std::optional<std::string>("-DNDEBUG"));
  CHECK(once("/dev/fd/63") == std::optional<std::string>("-DNDEBUG"));
  CHECK(reads == 1);
  CHECK_FALSE(once("gone"));
  CHECK_FALSE(once("gone"));
  CHECK(reads == 2);
  // The system context's reader is memoised: a real pipe read through every expansion plan() does.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::write(fds[1], "-DNDEBUG\n", 9) == 9);
  ::close(fds[1]);
  auto ctx = ccshim::system_context();
  const std::string at = "@/proc/self/fd/" + std::to_string(fds[0]);
  for (int i = 0; i < 4; ++i) CHECK(ccshim::expand_response_files({at, "x.c"}, ctx) == Args{"-DNDEBUG", "x.c"});
  ::close(fds[0]);
}

TEST_CASE("gcc spellings: -u SYM becomes a linker -u", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translate({"-u", "PyInit_x", "m.c"}, sys.context())) == Args{"-Wl,-u,PyInit_x", "m.c"});
  CHECK(body(translate({"-umain"}, sys.context())) == Args{"-umain"});  // zig reads the joined form right
  CHECK(body(translate({"-Xlinker", "-u", "-Xlinker", "s"}, sys.context())) == Args{"-Xlinker", "-u", "-Xlinker", "s"});
}

TEST_CASE("gcc spellings: -march and -mcpu CPU names get zig's underscores", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translate({"-march=x86-64"}, sys.context())) == Args{"-march=x86_64"});
  CHECK(body(translate({"-march=x86-64-v3"}, sys.context())) == Args{"-march=x86_64_v3"});
  CHECK(body(translate({"-march=skylake-avx512"}, sys.context())) == Args{"-march=skylake_avx512"});
  CHECK(body(translate({"-mcpu=cortex-a72"}, sys.context())) == Args{"-mcpu=cortex_a72"});
  CHECK(body(translate({"-march=native"}, sys.context())) == Args{"-march=native"});
}

TEST_CASE("gcc spellings: any -mtune is dropped", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translate({"-mtune=generic", "-O2"}, sys.context())) == Args{"-O2"});
  CHECK(body(translate({"-mtune=haswell"}, sys.context())).empty());
}

TEST_CASE("linker options zig rejects and that change nothing are dropped", "[ccshim]") {
  FakeSystem sys;
  auto t = [&](const std::string& a) { return body(translate({a}, sys.context())); };
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
  auto t = [&](const std::string& a) { return body(translate({a}, sys.context())); };
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
  auto t = [&](const std::string& a) { return body(translate({"-c", "a.c", a}, sys.context())); };
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
    CHECK(body(translate({dropped, "x.c"}, sys.context())) == Args{"x.c"});
  }
}

TEST_CASE("values of options taking a separate argument are never translated", "[ccshim]") {
  FakeSystem sys;
  CHECK(body(translate({"-o", "-mtune=x", "-D", "-u", "-I", "-lgcc", "-x", "-Wl,-stats"}, sys.context())) ==
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
  CHECK(body(translate(fine, sys.context())) == fine);
}

// ---- issue 12: answering as gcc does ----

TEST_CASE("glibc: zig is told the host's glibc, and given gcc's system dirs", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  ctx.system_include_dirs = {"/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include"};
  ctx.system_library_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib"};
  ctx.library_path = {"/lp"};
  auto out = translate({"-O2", "a.c", "-I/mine", "-L/mine"}, ctx);
  REQUIRE(out.size() > 4);
  CHECK(Args(out.begin(), out.begin() + 3) ==
        Args{"-target", "x86_64-linux-gnu.2.36", "-fno-sanitize=all"});  // zig's baseline CPU: gcc's
  // gcc's order: the command line's -I/-L first, then LIBRARY_PATH, then the system dirs.
  CHECK(Args(out.end() - 9, out.end()) == Args{"-idirafter", "/usr/local/include", "-idirafter",
                                               "/usr/include/x86_64-linux-gnu", "-idirafter", "/usr/include", "-L/lp",
                                               "-L/lib/x86_64-linux-gnu", "-L/usr/lib"});
  CHECK(sys.glibc_reads == 1);
  // -nostdinc: no system headers, as in gcc; a sysroot has headers of its own.
  for (Args args : {Args{"-nostdinc", "a.c"}, Args{"--sysroot=/sr", "a.c"}, Args{"--sysroot", "/sr", "a.c"}}) {
    out = translate(args, ctx);
    CHECK(std::find(out.begin(), out.end(), "-idirafter") == out.end());
  }
}

TEST_CASE("glibc: a caller's own target (or -m32) is left alone, and so is a host without glibc", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  for (Args args : {Args{"-target", "aarch64-linux-gnu.2.28", "a.c"}, Args{"--target=x86_64-linux-musl", "a.c"},
                    Args{"-m32", "a.c"}}) {
    auto out = translate(args, sys.context());
    CHECK(std::count(out.begin(), out.end(), "-target") == (args[0] == "-target" ? 1 : 0));
    CHECK(std::find(out.begin(), out.end(), "x86_64-linux-gnu.2.36") == out.end());
    CHECK(std::find(out.begin(), out.end(), "-march=native") == out.end());
  }
  CHECK(sys.glibc_reads == 0);
  sys.glibc.reset();
  auto out = translate({"a.c"}, sys.context());
  CHECK(std::find(out.begin(), out.end(), "-target") == out.end());
  CHECK(sys.glibc_reads == 1);
}

TEST_CASE("glibc: the version comes from the host's libc.so.6 itself", "[ccshim]") {
  auto ctx = ccshim::system_context();
  auto version = ctx.glibc_version();
  REQUIRE(version.has_value());
  // This test runs on glibc: the same release the test binary itself runs on.
  CHECK(*version == std::string(gnu_get_libc_version()).substr(0, version->size()));
}

TEST_CASE("glibc: the target names the host's architecture, so zig's clang reads it for stdin too", "[ccshim]") {
  // zig 0.11 hands `-target native-native-...` to clang unresolved when the
  // input is `-` (meson's `cc -E -dM -`): "unknown target triple".
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  auto out = translate({"-E", "-dM", "-"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 3) ==
        Args{"-target", "x86_64-linux-gnu.2.36", "-fno-sanitize=all"});  // gcc's baseline CPU
  ctx.host = aarch64;
  out = translate({"-E", "-dM", "-"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 2) == Args{"-target", "aarch64-linux-gnu.2.36"});
  // The caller's CPU replaces the native one.
  ctx.host = x86_64;
  out = translate({"-march=x86-64", "a.c"}, ctx);
  CHECK(std::count(out.begin(), out.end(), "-march=native") == 0);
  CHECK(std::count(out.begin(), out.end(), "-march=x86_64") == 1);
}

TEST_CASE("glibc: never newer than zig can build stubs for (a host newer than zig)", "[ccshim]") {
  CHECK(ccshim::glibc_zig_can_build("2.39", "2.34") == "2.34");
  CHECK(ccshim::glibc_zig_can_build("2.36", "2.34") == "2.34");
  CHECK(ccshim::glibc_zig_can_build("2.34", "2.34") == "2.34");
  CHECK(ccshim::glibc_zig_can_build("2.31", "2.34") == "2.31");
  CHECK(ccshim::glibc_zig_can_build("2.39", std::nullopt) == "2.39");  // zig's list unknown: as before
  CHECK(ccshim::glibc_zig_can_build("2.39", "garbage") == "2.39");
  FakeSystem sys;
  sys.glibc = "2.39";  // Ubuntu 24.04
  auto ctx = sys.context();
  int zig_reads = 0;
  ctx.zig_newest_glibc = [&]() -> std::optional<std::string> {
    ++zig_reads;
    return "2.34";
  };
  auto out = translate({"launcher.c", "-shared", "-fPIC", "-o", "l.so"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 2) == Args{"-target", "x86_64-linux-gnu.2.34"});
  CHECK(zig_reads == 1);
}

TEST_CASE("glibc: the stand-in of a glibc 2.39 libc.so.6 read through the real path", "[ccshim]") {
  // Built by tests/CMakeLists.txt with GLIBC_2.2.5 ... GLIBC_2.39 version definitions.
  const fs::path dir = PROVKIT_BUILD_DIR "/tests/glibc239";
  REQUIRE(fs::is_regular_file(dir / "libc.so.6"));
  auto version = ccshim::host_glibc_version(x86_64, {dir});
  REQUIRE(version == std::optional<std::string>("2.39"));
  CHECK(ccshim::glibc_zig_can_build(*version, "2.34") == "2.34");
}

TEST_CASE("glibc: zig's newest buildable glibc comes from its abilists", "[ccshim]") {
  test::TempDir tmp("ccshim-abilists");
  auto root = tmp.path / "zig-linux-x64";
  fs::create_directories(root / "lib" / "libc" / "glibc");
  { std::ofstream(root / "zig") << "#!/bin/sh\n"; }
  auto write_abilists = [&](const std::string& bytes) {
    std::ofstream(root / "lib" / "libc" / "glibc" / "abilists", std::ios::binary) << bytes;
  };
  // 2 libraries, then 3 versions (2.2.5, 2.34.0, 2.17.0), then the rest of the file.
  write_abilists(std::string("\x02m\0c\0\x03\x02\x02\x05\x02\x22\x00\x02\x11\x00rest", 19));
  CHECK(ccshim::newest_glibc_zig_builds(root / "zig") == std::optional<std::string>("2.34"));
  // Through a link, as a bin/zig link to the unpacked archive.
  fs::create_directories(tmp.path / "bin");
  fs::create_symlink(root / "zig", tmp.path / "bin" / "zig");
  CHECK(ccshim::newest_glibc_zig_builds(tmp.path / "bin" / "zig") == std::optional<std::string>("2.34"));
  // Truncated inside the versions, or no file: unknown.
  write_abilists(std::string("\x02m\0c\0\x03\x02\x02\x05\x02", 10));
  CHECK(ccshim::newest_glibc_zig_builds(root / "zig") == std::nullopt);
  fs::remove(root / "lib" / "libc" / "glibc" / "abilists");
  CHECK(ccshim::newest_glibc_zig_builds(root / "zig") == std::nullopt);
}

TEST_CASE("glibc: zig links against the host's own libc when its development files are there", "[ccshim]") {
  // zig 0.11's glibc stubs stop at 2.34: pidfd_open and arc4random (2.36)
  // are declared by the headers but do not link against them.
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  CHECK(ccshim::zig_libc_file({"a.c"}, ctx) == std::nullopt);  // no libc6-dev
  ctx.host_libc = ccshim::HostLibc{"/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"};
  CHECK(ccshim::zig_libc_file({"a.c", "-o", "a"}, ctx) ==
        std::optional<std::string>("include_dir=/usr/include\n"
                                   "sys_include_dir=/usr/include/x86_64-linux-gnu\n"
                                   "crt_dir=/usr/lib/x86_64-linux-gnu\n"
                                   "msvc_lib_dir=\nkernel32_lib_dir=\ngcc_dir=\n"));
  // Not when the shim sets no glibc target, nor without the system headers.
  for (Args args : {Args{"-m32", "a.c"}, Args{"-target", "aarch64-linux-gnu", "a.c"}, Args{"-nostdinc", "a.c"},
                    Args{"--sysroot=/sr", "a.c"}})
    CHECK(ccshim::zig_libc_file(args, ctx) == std::nullopt);
  sys.glibc.reset();
  CHECK(ccshim::zig_libc_file({"a.c"}, ctx) == std::nullopt);
}

TEST_CASE("glibc: the system context finds this host's libc development files", "[ccshim]") {
  // This Debian host has libc6-dev (gcc depends on it).
  auto ctx = ccshim::system_context();
  REQUIRE(ctx.host_libc.has_value());
  CHECK(fs::is_regular_file(ctx.host_libc->crt_dir / "crt1.o"));
  CHECK(fs::is_regular_file(ctx.host_libc->include_dir / "stdlib.h"));
}

TEST_CASE("gcc defaults: PIE code and a PIE executable, as Debian's gcc", "[ccshim]") {
  FakeSystem sys;
  auto has = [](const Args& out, const std::string& a) { return std::count(out.begin(), out.end(), a); };
  auto out = translate({"w.c", "-o", "w"}, sys.context());
  CHECK(has(out, "-fPIE") == 1);
  CHECK(has(out, "-pie") == 1);
  // The defaults go before the caller's arguments.
  CHECK(std::find(out.begin(), out.end(), "-pie") < std::find(out.begin(), out.end(), "w.c"));
  // No link: PIE code only.
  for (Args args : {Args{"-c", "w.c"}, Args{"-S", "w.c"}, Args{"-E", "w.c"}, Args{"-M", "w.c"}, Args{"-MM", "w.c"},
                    Args{"-fsyntax-only", "w.c"}}) {
    out = translate(args, sys.context());
    CHECK(has(out, "-fPIE") == 1);
    CHECK(has(out, "-pie") == 0);
  }
  // gcc's specs: %{static|shared|r:;!no-pie:-pie}
  for (Args args : {Args{"-shared", "w.c"}, Args{"-r", "w.o"}, Args{"-static", "w.c"}, Args{"-no-pie", "w.c"}}) {
    out = translate(args, sys.context());
    CHECK(has(out, "-pie") == 0);
    CHECK(has(out, "-fPIE") == 1);
  }
  // The caller's own code model is theirs.
  for (std::string model : {"-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-PIC", "-fno-pic", "-fno-PIE", "-fno-pie"}) {
    out = translate({model, "-c", "w.c"}, sys.context());
    CHECK(has(out, "-fPIE") == (model == "-fPIE" ? 1 : 0));
    CHECK(has(out, model) == 1);
  }
}

TEST_CASE("gcc defaults: no _DEBUG (zig defines it without -O), unless the caller defines it", "[ccshim]") {
  FakeSystem sys;
  auto out = translate({"w.c"}, sys.context());
  auto undef = std::find(out.begin(), out.end(), "-U_DEBUG");
  REQUIRE(undef != out.end());
  CHECK(undef < std::find(out.begin(), out.end(), "w.c"));
  out = translate({"-D_DEBUG", "w.c"}, sys.context());
  CHECK(std::find(out.begin(), out.end(), "-U_DEBUG") < std::find(out.begin(), out.end(), "-D_DEBUG"));
}

TEST_CASE("linker version: -Wl,--version asks for the linker's version, as meson asks", "[ccshim]") {
  FakeSystem sys;
  sys.response_files["/r"] = "-Wl,--version";
  for (Args args : {Args{"-Wl,--version"}, Args{"-Wl,-O1,--version"}, Args{"-Xlinker", "--version"}, Args{"@/r"},
                    Args{"-m64", "-Wl,--version", "a.c"}})
    CHECK(ccshim::asks_linker_version(args, sys.context()));
  for (Args args : {Args{"--version"}, Args{"-Wl,--version-script,v.map", "a.c"}, Args{"-o", "-Wl,--version"},
                    Args{"-Wl,-v"}, Args{"a.c"}})
    CHECK_FALSE(ccshim::asks_linker_version(args, sys.context()));
}

TEST_CASE("gcc option -Wl,-rpath DIR: a linker option's value as gcc's next argument is paired as ld pairs it",
          "[ccshim]") {
  FakeSystem sys;
  auto t = [&](const Args& a) { return body(translate(a, sys.context())); };
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
  CHECK(body(translate({"-lgcc", "-l", "gcc", "-lgcc_eh", "-lgcc_s", "-lm"}, sys.context())) == Args{"-lgcc_s", "-lm"});
}

TEST_CASE("gcc option -lNAME: a library of another class first in the -L dirs is skipped as GNU ld skips it",
          "[ccshim]") {
  FakeSystem sys;
  sys.elves["/lib/i386-linux-gnu/libfoo.so"] = i386;
  sys.elves["/l64/libfoo.so"] = x86_64;
  auto t = [&](const Args& a) { return body(translate(a, sys.context())); };
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

TEST_CASE("gcc option -dumpmachine and -print-multiarch are answered with the multiarch triple", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  CHECK(ccshim::answer_query({"-dumpmachine"}, sys.context()) == std::optional<std::string>("x86_64-linux-gnu\n"));
  CHECK(ccshim::answer_query({"-m32", "-dumpmachine"}, sys.context()) ==
        std::optional<std::string>("x86_64-linux-gnu\n"));
  CHECK(ccshim::answer_query({"-m32", "-print-multiarch"}, sys.context()) ==
        std::optional<std::string>("i386-linux-gnu\n"));
  CHECK_FALSE(ccshim::answer_query({"-c", "a.c"}, sys.context()));
  CHECK_FALSE(ccshim::answer_query({"--target=aarch64-linux-gnu", "-dumpmachine"}, sys.context()));
  CHECK_FALSE(ccshim::answer_query({"-o", "-dumpmachine", "a.c"}, sys.context()));  // a file name
  sys.glibc.reset();
  CHECK_FALSE(ccshim::answer_query({"-dumpmachine"}, sys.context()));
  CHECK(ccshim::multiarch_triple(aarch64) == "aarch64-linux-gnu");
}

TEST_CASE("warnings: clang's defaults that gcc does not give are turned off after the caller's flags", "[ccshim]") {
  FakeSystem sys;
  auto has = [](const Args& out, const std::string& a) { return std::find(out.begin(), out.end(), a) != out.end(); };
  auto out = translate({"-O3", "-shared", "-fPIC", "-Wno-psabi", "stub.c"}, sys.context());
  CHECK(has(out, "-Wno-pointer-sign"));  // Triton's launcher stub
  CHECK(has(out, "-Wno-unknown-warning-option"));
  CHECK(std::find(out.begin(), out.end(), "-Wno-pointer-sign") > std::find(out.begin(), out.end(), "stub.c"));
  // gcc errors that are warnings in gcc 12 stay warnings
  CHECK(has(out, "-Wno-error=implicit-function-declaration"));
  CHECK(std::find(out.begin(), out.end(), "-Wno-error=int-conversion") < std::find(out.begin(), out.end(), "stub.c"));
  // -Wall asks for gcc's -Wpointer-sign, -Wparentheses...; clang-only ones stay off
  out = translate({"-Wall", "x.c"}, sys.context());
  CHECK_FALSE(has(out, "-Wno-pointer-sign"));
  CHECK_FALSE(has(out, "-Wno-parentheses"));
  CHECK(has(out, "-Wno-parentheses-equality"));
  CHECK(has(out, "-Wno-string-plus-int"));
  // the warning itself, or as an error, by name
  CHECK_FALSE(has(translate({"-Wpointer-sign", "x.c"}, sys.context()), "-Wno-pointer-sign"));
  CHECK_FALSE(has(translate({"-Werror=pointer-sign", "x.c"}, sys.context()), "-Wno-pointer-sign"));
  CHECK(has(translate({"-pedantic", "x.c"}, sys.context()), "-Wno-parentheses"));
  CHECK_FALSE(has(translate({"-pedantic", "x.c"}, sys.context()), "-Wno-pointer-sign"));
  // clang-only ones stay off whatever -W set asks (zlib's K&R code, pixman's -Wall extras)
  for (const auto& w : {"-Wno-deprecated-non-prototype", "-Wno-sometimes-uninitialized", "-Wno-self-assign"}) {
    CHECK(has(translate({"-Wall", "-Wextra", "x.c"}, sys.context()), w));
  }
  // gcc's -Wstrict-prototypes is not clang's: off even when named (json-c's -Werror build)
  CHECK(has(translate({"-Werror", "-Wstrict-prototypes", "x.c"}, sys.context()), "-Wno-strict-prototypes"));
  // gcc gives it under -Wextra: then asked for
  CHECK(has(translate({"-Wall", "x.c"}, sys.context()), "-Wno-expansion-to-defined"));
  CHECK_FALSE(has(translate({"-Wextra", "x.c"}, sys.context()), "-Wno-expansion-to-defined"));
  CHECK(has(translate({"-Wall", "x.c"}, sys.context()), "-Wno-absolute-value"));  // pixman's matrix-test
  CHECK_FALSE(has(translate({"-Wextra", "x.c"}, sys.context()), "-Wno-absolute-value"));
  CHECK_FALSE(has(translate({"-Wabsolute-value", "x.c"}, sys.context()), "-Wno-absolute-value"));
  CHECK_FALSE(has(translate({"-Wsometimes-uninitialized", "x.c"}, sys.context()), "-Wno-sometimes-uninitialized"));
  CHECK(ccshim::warnings_mirror_gcc.starts_with("12."));
  // -Werror: gcc 12 makes those warnings errors too
  CHECK_FALSE(has(translate({"-Werror", "x.c"}, sys.context()), "-Wno-error=implicit-function-declaration"));
}

// ---- issue 11 item 14: long command lines reach zig in a response file ----

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

TEST_CASE("locate_zig: CC_SHIM_ZIG then PATH then a ziglang package next to the shim", "[ccshim]") {
  provkit::test::TempDir tmp("ccshim-zig");
  const fs::path& root = tmp.path;
  auto make_exe = [](const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n";
    fs::permissions(p, fs::perms(0755));
  };
  auto self = root / "venv/bin/cc-shim";
  make_exe(self);
  make_exe(root / "venv/lib/python3.11/site-packages/ziglang/zig");
  make_exe(root / "onpath/zig");
  std::ofstream((fs::create_directories(root / "noexec"), root / "noexec/zig")) << "not executable";

  ccshim::ZigQuery q;
  q.self_exe = self;
  q.shim_dirs = {root / "venv/bin"};

  SECTION("CC_SHIM_ZIG wins and is the only candidate") {
    q.cc_shim_zig = (root / "onpath/zig").string();
    q.path_env = (root / "elsewhere").string();
    auto r = ccshim::locate_zig(q);
    REQUIRE(r.zig);
    CHECK(*r.zig == root / "onpath/zig");
    CHECK(r.how == "CC_SHIM_ZIG");
    q.cc_shim_zig = (root / "noexec/zig").string();
    r = ccshim::locate_zig(q);
    CHECK(!r.zig);
    CHECK(r.looked == Args{"CC_SHIM_ZIG=" + q.cc_shim_zig + " (not an executable file)"});
  }
  SECTION("CC_SHIM_ZIG naming the shim itself is refused") {
    q.cc_shim_zig = self.string();
    auto r = ccshim::locate_zig(q);
    CHECK(!r.zig);
    CHECK(r.looked[0].find("cc-shim itself") != std::string::npos);
  }
  SECTION("zig on PATH, skipping non-executables and the shim itself") {
    fs::create_directories(root / "selfdir");
    fs::create_symlink(self, root / "selfdir/zig");
    q.path_env = (root / "noexec").string() + ":" + (root / "selfdir").string() + ":" + (root / "onpath").string();
    auto r = ccshim::locate_zig(q);
    REQUIRE(r.zig);
    CHECK(*r.zig == root / "onpath/zig");
    CHECK(r.how == "PATH");
  }
  SECTION("the ziglang package of the venv the shim is in") {
    q.path_env = (root / "noexec").string();
    auto r = ccshim::locate_zig(q);
    REQUIRE(r.zig);
    CHECK(*r.zig == root / "venv/lib/python3.11/site-packages/ziglang/zig");
    CHECK(r.how == "ziglang package");
  }
  SECTION("nothing found: every place looked at is listed") {
    fs::remove_all(root / "venv/lib");
    q.path_env = "/nonexistent";
    auto r = ccshim::locate_zig(q);
    CHECK(!r.zig);
    CHECK(r.looked == Args{"zig on PATH (/nonexistent)",
                           (root / "venv/lib/python3*/site-packages/ziglang/zig").string(),
                           (root / "venv/lib64/python3*/site-packages/ziglang/zig").string()});
  }
}

TEST_CASE("called_as_cxx and shell_quote", "[ccshim]") {
  CHECK(ccshim::called_as_cxx("/usr/bin/g++"));
  CHECK(ccshim::called_as_cxx("c++"));
  CHECK(ccshim::called_as_cxx("x86_64-linux-gnu-g++"));
  CHECK(!ccshim::called_as_cxx("/opt/bin/cc"));
  CHECK(!ccshim::called_as_cxx("cc-shim"));
  CHECK(ccshim::shell_quote("-O2") == "-O2");
  CHECK(ccshim::shell_quote("a b") == "'a b'");
  CHECK(ccshim::shell_quote("it's") == "'it'\\''s'");
  CHECK(ccshim::shell_quote("") == "''");
}

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

TEST_CASE("output: the -o value as gcc takes it", "[ccshim]") {
  using ccshim::output_argument;
  using Found = std::optional<std::pair<std::size_t, std::string>>;
  CHECK(output_argument({"-c", "a.c", "-o", "a.o"}) == Found({3, "a.o"}));
  CHECK(output_argument({"-o/dev/null", "a.c"}) == Found({0, "/dev/null"}));
  CHECK(output_argument({"-o", "x", "-o", "y"}) == Found({3, "y"}));  // the last one
  CHECK(output_argument({"-D", "-o", "a.c"}) == std::nullopt);        // a -D value
  CHECK(output_argument({"a.c"}) == std::nullopt);
}
