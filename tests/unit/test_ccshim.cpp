// cc-shim's translation, one rule per test case (docs/cc-shim.md has the reasons).
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "provkit/ccshim.hpp"
#include "provkit/error.hpp"

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
  std::vector<elf::CacheEntry> cache;
  std::vector<std::string> probed;
  int cache_reads = 0;

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
    ctx.read_response_file = [this](const fs::path& p) -> std::optional<std::string> {
      auto it = response_files.find(p.string());
      if (it == response_files.end()) return std::nullopt;
      return it->second;
    };
    return ctx;
  }
};

// The translation minus the leading -fno-sanitize=all, for rules that are not about it.
Args body(const Args& out) {
  REQUIRE(!out.empty());
  REQUIRE(out.front() == "-fno-sanitize=all");
  return Args(out.begin() + 1, out.end());
}

}  // namespace

TEST_CASE("plain arguments pass through after -fno-sanitize=all", "[ccshim]") {
  FakeSystem sys;
  auto out = translate({"-O2", "-c", "a.c", "-o", "a.o", "-Wall", "-I/inc", "-DX=1"}, sys.context());
  CHECK(out == Args{"-fno-sanitize=all", "-O2", "-c", "a.c", "-o", "a.o", "-Wall", "-I/inc", "-DX=1"});
  CHECK(sys.cache_reads == 0);  // no -l: -> ld.so.cache never read
}

TEST_CASE("sanitizers: -fno-sanitize=all is put first before the caller's arguments", "[ccshim]") {
  FakeSystem sys;
  auto out = translate({"-O0", "ub.c"}, sys.context());
  CHECK(out == Args{"-fno-sanitize=all", "-O0", "ub.c"});
}

TEST_CASE("sanitizers: a caller that enables one gets no -fno-sanitize=all so its own wins", "[ccshim]") {
  FakeSystem sys;
  CHECK(translate({"-O0", "-fsanitize=undefined", "ub.c"}, sys.context()) == Args{"-O0", "-fsanitize=undefined", "ub.c"});
  CHECK(translate({"-fsanitize=address,undefined", "x.c"}, sys.context()) == Args{"-fsanitize=address,undefined", "x.c"});
  // turning sanitizers off is not enabling one
  CHECK(translate({"-fno-sanitize=undefined", "x.c"}, sys.context()) ==
        Args{"-fno-sanitize=all", "-fno-sanitize=undefined", "x.c"});
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
  auto out = body(translate(
      {"-l:libcuda.so.1", "-L/lib/i386-linux-gnu", "-L/usr/lib/arm", "-L/real"}, sys.context()));
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
  sys.cache = {{"libcuda.so.1", "/cache32/libcuda.so.1"}, {"libcuda.so.1", "/cache64/libcuda.so.1"},
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
    CHECK(std::string(e.what()).find("deeper than 32") != std::string::npos);
  }
}

TEST_CASE("response files read from disk by the system context", "[ccshim]") {
  auto dir = fs::temp_directory_path() / ("ccshim-rsp-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.rsp") << "-DFROM_DISK '-DQ=1 2'";
  auto out = ccshim::expand_response_files({"@" + (dir / "a.rsp").string(), "@" + dir.string()},
                                           ccshim::system_context());
  CHECK(out == Args{"-DFROM_DISK", "-DQ=1 2", "@" + dir.string()});  // a directory is not readable as a file
  fs::remove_all(dir);
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
  for (const char* dropped : {"-Wl,-stats", "-Wl,--stats", "-Wl,--no-undefined-version", "-Wl,--fatal-warnings",
                              "-Wl,--warn-common", "-Wl,--enable-new-dtags", "-Wl,-Bsymbolic-functions",
                              "-Wl,--no-add-needed", "-Wl,--no-copy-dt-needed-entries", "-Wl,--threads=4",
                              "-Wl,--no-threads", "-Wl,-plugin-opt=O2", "-Wl,--plugin-opt=mcpu=x",
                              "-Wl,--icf=all", "-Wl,-rpath-link,/x", "-Wl,-rpath-link=/x", "-Wl,--rpath-link,/x",
                              "-Wl,-z,separate-code", "-Wl,-z,noseparate-code", "-Wl,-zseparate-code",
                              "-Wl,-z,combreloc", "-Wl,-z,pack-relative-relocs"}) {
    INFO(dropped);
    CHECK(t(dropped).empty());
  }
}

TEST_CASE("linker options zig understands are kept in order", "[ccshim]") {
  FakeSystem sys;
  auto t = [&](const std::string& a) { return body(translate({a}, sys.context())); };
  CHECK(t("-Wl,-O1,--sort-common,--as-needed,-z,relro,-z,now") == Args{"-Wl,-O1,--sort-common,--as-needed,-z,relro,-z,now"});
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
  CHECK(body(translate({"-o", "-mtune=x", "-Xlinker", "-Bsymbolic-functions", "-D", "-u"}, sys.context())) ==
        Args{"-o", "-mtune=x", "-Xlinker", "-Bsymbolic-functions", "-D", "-u"});
}

TEST_CASE("the gcc spellings zig already reads right are not touched", "[ccshim]") {
  FakeSystem sys;
  Args fine = {"-pthread", "-Wl,--as-needed", "-fstack-clash-protection", "-fcf-protection", "-Wp,-D_FORTIFY_SOURCE=2",
               "-lgcc_s", "-e", "start", "--target=x86_64-linux-gnu", "-fno-semantic-interposition",
               "-Wl,-z,relro", "-Wl,-O1", "-Wl,--hash-style=gnu", "-g3", "-gsplit-dwarf", "-march=native"};
  CHECK(body(translate(fine, sys.context())) == fine);
}

TEST_CASE("locate_zig: CC_SHIM_ZIG then PATH then a ziglang package next to the shim", "[ccshim]") {
  auto root = fs::temp_directory_path() / ("ccshim-zig-" + std::to_string(::getpid()));
  fs::remove_all(root);
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
  fs::remove_all(root);
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
