// The ELF reader and the loader-like DT_NEEDED walk (lib/src/elf.cpp), on
// small shared objects written here byte by byte: one PT_LOAD, one
// PT_DYNAMIC, a string table. Enough for read_dynamic and resolve_needed.
#include <catch2/catch.hpp>

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "provkit/elf/elf.hpp"
#include "provkit/error.hpp"

#include "support/elf_with_section.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

namespace {

using provkit::test::TempDir;

struct ObjectSpec {
  std::string soname;
  std::vector<std::string> needed;
  std::string rpath, runpath;
};

// An ELF64 shared object of the host's machine with just a dynamic section.
// Virtual addresses equal file offsets (one PT_LOAD from offset 0).
void write_shared_object(const fs::path& path, const ObjectSpec& spec) {
  std::string strtab(1, '\0');
  auto add = [&](const std::string& s) {
    auto at = strtab.size();
    strtab += s;
    strtab += '\0';
    return static_cast<Elf64_Xword>(at);
  };
  std::vector<Elf64_Dyn> dyn;
  for (const auto& n : spec.needed) dyn.push_back({DT_NEEDED, {add(n)}});
  if (!spec.soname.empty()) dyn.push_back({DT_SONAME, {add(spec.soname)}});
  if (!spec.rpath.empty()) dyn.push_back({DT_RPATH, {add(spec.rpath)}});
  if (!spec.runpath.empty()) dyn.push_back({DT_RUNPATH, {add(spec.runpath)}});
  const std::size_t strtab_off = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr);
  const std::size_t dyn_off = (strtab_off + strtab.size() + 7) & ~std::size_t(7);
  dyn.push_back({DT_STRTAB, {strtab_off}});
  dyn.push_back({DT_STRSZ, {strtab.size()}});
  dyn.push_back({DT_NULL, {0}});
  const std::size_t size = dyn_off + dyn.size() * sizeof(Elf64_Dyn);

  std::string out(size, '\0');
  Elf64_Ehdr eh = test::elf64_header(elf::host_identity().machine);
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 2;
  Elf64_Phdr load{PT_LOAD, PF_R, 0, 0, 0, size, size, 0x1000};
  Elf64_Phdr dynamic{
      PT_DYNAMIC, PF_R, dyn_off, dyn_off, dyn_off, dyn.size() * sizeof(Elf64_Dyn), dyn.size() * sizeof(Elf64_Dyn), 8};
  std::memcpy(out.data(), &eh, sizeof eh);
  std::memcpy(out.data() + sizeof eh, &load, sizeof load);
  std::memcpy(out.data() + sizeof eh + sizeof load, &dynamic, sizeof dynamic);
  std::memcpy(out.data() + strtab_off, strtab.data(), strtab.size());
  std::memcpy(out.data() + dyn_off, dyn.data(), dyn.size() * sizeof(Elf64_Dyn));
  std::ofstream(path, std::ios::binary) << out;
}

elf::SearchContext empty_context() {
  elf::SearchContext ctx;
  ctx.want = elf::host_identity();
  return ctx;
}

}  // namespace

TEST_CASE("ELF: the written test objects read back", "[elf]") {
  TempDir dir;
  write_shared_object(dir.path / "liba.so", {"liba.so", {"libb.so", "libc.so.6"}, "$ORIGIN/x:/y", ""});
  auto info = elf::read_dynamic(dir.path / "liba.so");
  CHECK(info.has_dynamic);
  CHECK(info.soname == "liba.so");
  CHECK(info.needed == std::vector<std::string>{"libb.so", "libc.so.6"});
  CHECK(info.rpath == std::vector<std::string>{"$ORIGIN/x", "/y"});
  CHECK(info.runpath.empty());
}

// Issue 11 item 13: opening a FIFO for reading waits for a writer; nothing
// that probes candidate libraries may do that.
TEST_CASE("ELF: a FIFO is never opened, only reported", "[elf]") {
  TempDir dir;
  auto fifo = dir.path / "libfifo.so";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  CHECK_FALSE(elf::read_identity(fifo).has_value());
  CHECK_THROWS_WITH(elf::read_dynamic(fifo), Catch::Contains("libfifo.so: not a regular file (a FIFO)"));
  auto ctx = empty_context();
  ctx.ld_library_path = {dir.path};
  auto found = elf::find_library("libfifo.so", ctx);
  CHECK_FALSE(found.path.has_value());
  CHECK_THROWS_WITH(elf::read_dynamic(dir.path), Catch::Contains("not a regular file (a directory)"));
}

// Issue 11 item 15: each object's RPATH is inherited by the objects it loads,
// so a chain N deep searches N RPATHs at its far end. The walk must stay
// linear: a missing RPATH directory is asked about once, and inherited lists
// are shared, not copied. (Before: every level probed every inherited entry
// again, N*(N+1)/2 stats, 125,250 for the chain below; 65 s for N = 8000.)
TEST_CASE("ELF: a deep chain of inherited RPATHs is resolved with linear probes", "[elf]") {
  TempDir dir;
  const int n = 500;
  auto name = [](int i) { return "libchain" + std::to_string(i) + ".so"; };
  // lib0 (the root) carries the RPATH that finds everything; every other
  // object carries a build-tree RPATH of its own that does not exist here.
  for (int i = 0; i < n; ++i) {
    ObjectSpec spec{name(i),
                    {},
                    i == 0 ? dir.path.string() : "/nonexistent-provkit-build/" + std::to_string(i) + "/lib",
                    ""};
    if (i + 1 < n) spec.needed.push_back(name(i + 1));
    write_shared_object(dir.path / name(i), spec);
  }
  auto res = elf::resolve_needed(dir.path / name(0), empty_context());
  REQUIRE(res.missing.empty());
  REQUIRE(res.resolved.size() == n - 1);
  CHECK(res.resolved.back().name == name(n - 1));
  CHECK(res.resolved.back().lookup.via == "RPATH");
  CHECK(res.resolved.back().lookup.path == dir.path / name(n - 1));
  // One stat of each RPATH directory and one of each found library.
  CHECK(res.probes <= 2 * n + 2);

  // The common shape: every object in one directory with RPATH $ORIGIN.
  TempDir flat;
  for (int i = 0; i < n; ++i) {
    ObjectSpec spec{name(i), {}, "$ORIGIN", ""};
    if (i + 1 < n) spec.needed.push_back(name(i + 1));
    write_shared_object(flat.path / name(i), spec);
  }
  auto flat_res = elf::resolve_needed(flat.path / name(0), empty_context());
  REQUIRE(flat_res.resolved.size() == n - 1);
  CHECK(flat_res.probes <= n + 2);
}

TEST_CASE("ELF: an object with a RUNPATH has its needs searched without any RPATH", "[elf]") {
  TempDir dir;
  fs::create_directories(dir.path / "a");
  fs::create_directories(dir.path / "b");
  // root (RPATH a) -> mid (RUNPATH b, RPATH ignored) -> leaf, found in a through root's RPATH.
  write_shared_object(dir.path / "root.so", {"", {"libmid.so"}, (dir.path / "a").string(), ""});
  write_shared_object(dir.path / "a" / "libmid.so",
                      {"libmid.so", {"libleaf.so"}, "/nowhere", (dir.path / "b").string()});
  write_shared_object(dir.path / "a" / "libleaf.so", {"libleaf.so", {}, "", ""});
  auto res = elf::resolve_needed(dir.path / "root.so", empty_context());
  // mid has a RUNPATH, so for its own needs only RUNPATH (b) is searched, not a.
  REQUIRE(res.missing.size() == 1);
  CHECK(res.missing[0].name == "libleaf.so");
  write_shared_object(dir.path / "b" / "libleaf.so", {"libleaf.so", {}, "", ""});
  res = elf::resolve_needed(dir.path / "root.so", empty_context());
  REQUIRE(res.missing.empty());
  REQUIRE(res.resolved.size() == 2);
  CHECK(res.resolved[1].lookup.via == "RUNPATH");
}

TEST_CASE("ELF: the hwcaps subdirectories ld.so --help says it searches, in its order", "[elf]") {
  // glibc 2.36's text on a CPU with x86-64-v3 (an AMD host: platform from AT_PLATFORM, no avx512_1). The order
  // is the one LD_DEBUG=libs shows ld.so trying, duplicates dropped.
  const std::string help = R"(Usage: ld.so [OPTION]... EXECUTABLE-FILE [ARGS-FOR-PROGRAM...]
  --list                list all dependencies and how they are resolved

Shared library search path:
  (libraries located via /etc/ld.so.cache)
  /lib/x86_64-linux-gnu (system search path)

Subdirectories of glibc-hwcaps directories, in priority order:
  x86-64-v4
  x86-64-v3 (supported, searched)
  x86-64-v2 (supported, searched)

Legacy HWCAP subdirectories under library search path directories:
  x86_64 (AT_PLATFORM; supported, searched)
  tls (supported, searched)
  avx512_1
  x86_64 (supported, searched)
)";
  auto facts = elf::parse_loader_help(help);
  CHECK(facts.platform == "x86_64");
  CHECK(facts.subdirs == std::vector<std::string>{"glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2",
                                                  "tls/x86_64/x86_64", "tls/x86_64", "tls", "x86_64/x86_64", "x86_64"});
  // An Intel host with AVX-512 (glibc names the platform haswell and adds avx512_1): every subset, largest first.
  const std::string intel = R"(Subdirectories of glibc-hwcaps directories, in priority order:
  x86-64-v4 (supported, searched)
  x86-64-v3 (supported, searched)
  x86-64-v2 (supported, searched)

Legacy HWCAP subdirectories under library search path directories:
  haswell (AT_PLATFORM; supported, searched)
  tls (supported, searched)
  avx512_1 (supported, searched)
  x86_64 (supported, searched)
)";
  auto intel_facts = elf::parse_loader_help(intel);
  CHECK(intel_facts.platform == "haswell");
  const auto& subdirs = intel_facts.subdirs;
  REQUIRE(subdirs.size() == 3 + 15);
  CHECK(subdirs[3] == "tls/haswell/avx512_1/x86_64");
  CHECK(subdirs[4] == "tls/haswell/avx512_1");
  CHECK(subdirs.back() == "x86_64");
  // glibc 2.37 and later: no legacy section; musl or no loader: nothing.
  CHECK(elf::parse_loader_help("Subdirectories of glibc-hwcaps directories, in priority order:\n  x86-64-v2 "
                               "(supported, searched)\n")
            .subdirs == std::vector<std::string>{"glibc-hwcaps/x86-64-v2"});
  CHECK(elf::parse_loader_help("musl libc (x86_64)\nVersion 1.2.3\n").subdirs.empty());
}
