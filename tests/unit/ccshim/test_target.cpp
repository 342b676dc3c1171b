// What a cc-shim command line builds for (ccshim/target.hpp): its ELF identity, the architecture's names,
// the glibc zig builds against and the libc file naming the host's own.
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

TEST_CASE("target: the target's ELF identity follows -m32 and -target/--target=", "[ccshim]") {
  CHECK(ccshim::target_identity(read_invocation({"-O2"}), x86_64) == x86_64);
  CHECK(ccshim::target_identity(read_invocation({"-m32"}), x86_64).elf_class == ELFCLASS32);
  CHECK(ccshim::target_identity(read_invocation({"-m32"}), x86_64).machine == EM_386);
  CHECK(ccshim::target_identity(read_invocation({"-m32", "-m64"}), x86_64) == x86_64);
  CHECK(ccshim::target_identity(read_invocation({"-target", "aarch64-linux-gnu"}), x86_64).machine == EM_AARCH64);
  CHECK(ccshim::target_identity(read_invocation({"--target=i686-linux-gnu"}), x86_64).machine == EM_386);
  CHECK(ccshim::target_identity(read_invocation({"--target=mystery-thing"}), x86_64) == x86_64);

  FakeSystem sys;
  sys.elves["/l32/libcuda.so.1"] = i386;
  sys.elves["/l64/libcuda.so.1"] = x86_64;
  CHECK(body(translated({"-m32", "-l:libcuda.so.1", "-L/l64", "-L/l32"}, sys.context()))[1] == "/l32/libcuda.so.1");
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
  auto out = translated({"launcher.c", "-shared", "-fPIC", "-o", "l.so"}, ctx);
  CHECK(Args(out.begin(), out.begin() + 2) == Args{"-target", "x86_64-linux-gnu.2.34"});
  CHECK(zig_reads == 1);
}

TEST_CASE("glibc: zig links against the host's own libc when its development files are there", "[ccshim]") {
  // zig 0.11's glibc stubs stop at 2.34: pidfd_open and arc4random (2.36)
  // are declared by the headers but do not link against them.
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  CHECK(ccshim::zig_libc_file(read_invocation({"a.c"}), ctx) == std::nullopt);  // no libc6-dev
  ctx.host_libc = ccshim::HostLibc{"/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"};
  CHECK(ccshim::zig_libc_file(read_invocation({"a.c", "-o", "a"}), ctx) ==
        std::optional<std::string>("include_dir=/usr/include\n"
                                   "sys_include_dir=/usr/include/x86_64-linux-gnu\n"
                                   "crt_dir=/usr/lib/x86_64-linux-gnu\n"
                                   "msvc_lib_dir=\nkernel32_lib_dir=\ngcc_dir=\n"));
  // Not when the shim sets no glibc target, nor without the system headers.
  for (const Args& args : {Args{"-m32", "a.c"}, Args{"-target", "aarch64-linux-gnu", "a.c"}, Args{"-nostdinc", "a.c"},
                           Args{"--sysroot=/sr", "a.c"}})
    CHECK(ccshim::zig_libc_file(read_invocation(args), ctx) == std::nullopt);
  sys.glibc.reset();
  CHECK(ccshim::zig_libc_file(read_invocation({"a.c"}), ctx) == std::nullopt);
}

TEST_CASE("target: Debian's multiarch and zig's names of an architecture, and whether zig's baseline is gcc's",
          "[ccshim]") {
  CHECK(ccshim::multiarch_triple(x86_64) == "x86_64-linux-gnu");
  CHECK(ccshim::multiarch_triple(i386) == "i386-linux-gnu");
  CHECK(ccshim::multiarch_triple(aarch64) == "aarch64-linux-gnu");
  CHECK(ccshim::multiarch_triple({ELFCLASS32, EM_X86_64, ET_DYN}) == "x86_64-linux-gnux32");
  CHECK(ccshim::multiarch_triple({ELFCLASS64, EM_SPARCV9, ET_DYN}).empty());
  CHECK(ccshim::zig_arch(x86_64) == "x86_64");
  CHECK(ccshim::zig_arch(i386) == "x86");
  CHECK(ccshim::zig_arch({ELFCLASS32, EM_X86_64, ET_DYN}).empty());  // x32: no zig glibc target
  CHECK(ccshim::zig_baseline_is_gccs(x86_64));
  CHECK(ccshim::zig_baseline_is_gccs(aarch64));
  CHECK_FALSE(ccshim::zig_baseline_is_gccs(i386));
}

TEST_CASE("target: the shim names a glibc only for the host's own ABI on a glibc host", "[ccshim]") {
  FakeSystem sys;
  sys.glibc = "2.36";
  auto ctx = sys.context();
  CHECK(ccshim::shim_glibc(read_invocation({"a.c"}), ctx) == std::optional<std::string>("2.36"));
  CHECK(ccshim::shim_glibc(read_invocation({"-m32", "a.c"}), ctx) == std::nullopt);
  CHECK(ccshim::shim_glibc(read_invocation({"--target=x86_64-linux-musl", "a.c"}), ctx) == std::nullopt);
  CHECK(sys.glibc_reads == 1);  // the ones naming their own target never ask
  sys.glibc.reset();
  CHECK(ccshim::shim_glibc(read_invocation({"a.c"}), ctx) == std::nullopt);
}
