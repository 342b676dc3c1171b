// The kernel listing (host/kernels, fatbin, offload_bundle) on real output of
// the toolchains: tests/data/kernels holds libraries built by nvcc 13.0
// (make_cuda.sh) and Debian's hipcc 5.2 (make_hip.sh), and the CCOB forms of
// the real bundle (make_ccob.py). Hostile variants are those files with a
// header patched to lie.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/code_verdict.hpp"
#include "provkit/elf/sections.hpp"
#include "provkit/error.hpp"
#include "provkit/kernels/listing.hpp"
#include "support/elf_with_section.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::host;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(PROVKIT_TEST_DATA) / "kernels";

std::vector<std::string> strings(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

code_verdict::Gpu nvidia(int major, int minor) {
  return {.label = "GPU 0 (test, sm_" + std::to_string(major) + std::to_string(minor) + ")",
          .cc = gpucode::Version{major, minor}};
}
code_verdict::Gpu amd(const std::string& gfx, std::optional<bool> xnack = std::nullopt,
                      std::optional<bool> sramecc = std::nullopt) {
  return {.label = "AMD " + gfx, .gfx = gfx, .xnack = xnack, .sramecc = sramecc};
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A copy of a test library with `bytes` written at `offset` of section `name` (+ `at`).
fs::path patched(const test::TempDir& tmp, const std::string& lib, const std::string& name, std::uint64_t at,
                 const std::string& bytes) {
  elf::ObjectFile f(kData / lib);
  auto s = elf::find_section(elf::read_sections(f), name);
  REQUIRE(s);
  auto data = read_all(kData / lib);
  data.replace(s->offset + at, bytes.size(), bytes);
  return tmp.write("patched-" + lib, data);
}

template <class T>
std::string le(T v) {
  std::string s(sizeof v, '\0');
  std::memcpy(s.data(), &v, sizeof v);
  return s;
}

}  // namespace

TEST_CASE("kernels: nvcc's fatbin lists every -gencode target with its variant", "[kernels]") {
  auto lib = kernels::list_kernels(kData / "libk_multi.so");
  CHECK(lib.problems.empty());
  // Built for sm_80, sm_90a, compute_90 (PTX), sm_120, sm_100f; nvcc writes two containers.
  CHECK(kernels::distinct_targets(lib, kernels::Kind::cubin) == strings({"sm_80", "sm_90a", "sm_100f", "sm_120"}));
  CHECK(kernels::distinct_targets(lib, kernels::Kind::ptx) == strings({"compute_90"}));
  CHECK(lib.images.size() == 9);
  for (const auto& i : lib.images) {
    CHECK(i.section == ".nv_fatbin");
    if (i.kind == kernels::Kind::ptx) {
      CHECK(i.ptx_isa == "9.0");  // nvcc 13.0 writes PTX ISA 9.0
      CHECK(i.compressed);        // nvcc compresses PTX by default
    } else {
      CHECK_FALSE(i.compressed);
    }
  }
}

TEST_CASE("kernels: compressed entries are listed from their headers", "[kernels]") {
  auto lib = kernels::list_kernels(kData / "libk_compressed.so");  // -Xfatbin=-compress-all
  CHECK(lib.problems.empty());
  CHECK(kernels::distinct_targets(lib, kernels::Kind::cubin) == strings({"sm_75", "sm_90"}));
  CHECK(kernels::distinct_targets(lib, kernels::Kind::ptx) == strings({"compute_90"}));
  CHECK(std::all_of(lib.images.begin(), lib.images.end(), [](const auto& i) { return i.compressed; }));
}

TEST_CASE("kernels: relocatable device code is read from __nv_relfatbin, apart", "[kernels]") {
  auto lib = kernels::list_kernels(kData / "libk_rdc.so");
  CHECK(lib.problems.empty());
  std::set<std::string> sections;
  for (const auto& i : lib.images) {
    sections.insert(i.section);
    CHECK(i.relocatable == (i.section == "__nv_relfatbin"));
  }
  CHECK(sections == std::set<std::string>{".nv_fatbin", "__nv_relfatbin"});
  // What the runtime loads (and cuobjdump lists): the device-linked sm_86 cubin.
  CHECK(kernels::distinct_targets(lib, kernels::Kind::cubin) == strings({"sm_86"}));
  CHECK(kernels::distinct_targets(lib, kernels::Kind::ptx).empty());
  // What a later device link would use: nvcc's -rdc objects.
  CHECK(kernels::distinct_targets(lib, kernels::Kind::cubin, kernels::Origin::relocatable) == strings({"sm_86"}));
  CHECK(kernels::distinct_targets(lib, kernels::Kind::ptx, kernels::Origin::relocatable) == strings({"compute_89"}));
}

TEST_CASE("kernels: a verdict per GPU from the cubin and PTX rules", "[kernels]") {
  auto multi = kernels::list_kernels(kData / "libk_multi.so");
  auto no90 = kernels::list_kernels(kData / "libk_no_sm90.so");
  auto rdc = kernels::list_kernels(kData / "libk_rdc.so");
  const int cuda13 = 13000;
  auto h200 = code_verdict::judge(multi, nvidia(9, 0), cuda13);
  CHECK(h200.status == check::Status::pass);
  CHECK(h200.via == "sm_90a");  // 'a' runs on its own arch
  // sm_90a does not run on a 9.1 GPU (if one existed); compute_90 PTX does.
  CHECK(code_verdict::judge(multi, nvidia(9, 1), cuda13).status == check::Status::warn);
  CHECK(code_verdict::judge(multi, nvidia(8, 6), cuda13).via == "sm_80");     // same major, lower minor
  CHECK(code_verdict::judge(multi, nvidia(12, 1), cuda13).via == "sm_120");   // the GB10 case: sm_120 on sm_121
  CHECK(code_verdict::judge(multi, nvidia(10, 3), cuda13).via == "sm_100f");  // family
  // compute_90 PTX JITs forward onto Blackwell when no cubin fits (sm_100f is not sm_11x).
  CHECK(code_verdict::judge(multi, nvidia(11, 0), cuda13).status == check::Status::warn);
  CHECK(code_verdict::judge(multi, nvidia(7, 5), cuda13).status == check::Status::fail);

  auto fail = code_verdict::judge(no90, nvidia(9, 0), cuda13);
  CHECK(fail.status == check::Status::fail);
  CHECK_THAT(fail.reason, Catch::Contains("sm_80 sm_86 sm_120") && Catch::Contains("compute_100"));

  CHECK(code_verdict::judge(rdc, nvidia(8, 9), cuda13).via == "sm_86");  // sm_86 runs on 8.9
  // Its compute_89 PTX is relocatable (__nv_relfatbin): the runtime does not load it, so nothing runs on 9.0.
  CHECK(code_verdict::judge(rdc, nvidia(9, 0), cuda13).status == check::Status::fail);
  auto only_ptx = code_verdict::judge(no90, nvidia(10, 0), cuda13);  // B200: no sm_10X cubin, compute_100 PTX
  CHECK(only_ptx.status == check::Status::warn);
  CHECK_THAT(only_ptx.reason, Catch::Contains("compute_100") && Catch::Contains("ISA 9.0") && Catch::Contains("JIT"));
  // A 12.8 driver cannot JIT ISA 9.0 (CUDA 13.0) PTX: nothing runs.
  auto old_driver = code_verdict::judge(no90, nvidia(10, 0), 12080);
  CHECK(old_driver.status == check::Status::fail);
  CHECK_THAT(old_driver.reason, Catch::Contains("needs a driver for CUDA 13.0"));
  // CUDA kernels say nothing about an AMD GPU.
  CHECK(code_verdict::judge(multi, amd("gfx90a"), cuda13).status == check::Status::info);
}

TEST_CASE("kernels: hipcc's offload bundle lists every code object with its features", "[kernels]") {
  auto lib = kernels::list_kernels(kData / "libh_multi.so");
  CHECK(lib.problems.empty());
  CHECK(kernels::distinct_targets(lib, kernels::Kind::code_object) ==
        strings({"gfx1030", "gfx908:sramecc+:xnack-", "gfx90a:xnack-"}));
  for (const auto& i : lib.images) {
    CHECK(i.section == ".hip_fatbin");
    CHECK_THAT(i.triple, Catch::StartsWith("hipv4-amdgcn-amd-amdhsa--"));
    CHECK_FALSE(i.compressed);
  }
  // Two translation units, two bundles in one section.
  auto two = kernels::list_kernels(kData / "libh_two.so");
  CHECK(two.problems.empty());
  CHECK(two.images.size() == 4);
  CHECK(kernels::distinct_targets(two, kernels::Kind::code_object) == strings({"gfx1031", "gfx906"}));
}

TEST_CASE("kernels: CCOB bundles (v2, v3, zstd and zlib) are listed from their decompressed start", "[kernels]") {
  for (const char* name : {"libh_ccob_v2.so", "libh_ccob_v3.so", "libh_ccob_zlib.so"}) {
    INFO(name);
    auto lib = kernels::list_kernels(kData / name);
    CHECK(lib.problems.empty());
    CHECK(kernels::distinct_targets(lib, kernels::Kind::code_object) ==
          strings({"gfx1030", "gfx908:sramecc+:xnack-", "gfx90a:xnack-"}));
    CHECK(std::all_of(lib.images.begin(), lib.images.end(), [](const auto& i) { return i.compressed; }));
  }
}

TEST_CASE("kernels: code objects run on their processor, generic ones on their family", "[kernels]") {
  auto lib = kernels::list_kernels(kData / "libh_multi.so");
  auto mi210 = code_verdict::judge(lib, amd("gfx90a", false), 0);
  CHECK(mi210.status == check::Status::pass);
  CHECK(mi210.via == "gfx90a:xnack-");
  auto mi300 = code_verdict::judge(lib, amd("gfx942"), 0);
  CHECK(mi300.status == check::Status::fail);
  CHECK_THAT(mi300.reason, Catch::Contains("gfx1030 gfx908:sramecc+:xnack- gfx90a:xnack-"));
  CHECK(code_verdict::judge(lib, nvidia(9, 0), 13000).status == check::Status::info);
}

TEST_CASE("kernels: a code object's xnack and sramecc must match the GPU's modes; none named runs in either",
          "[kernels]") {
  // libh_multi.so: gfx90a:xnack-, gfx908:sramecc+:xnack-, gfx1030 (hipcc's real bundle).
  auto lib = kernels::list_kernels(kData / "libh_multi.so");
  auto on = code_verdict::judge(lib, amd("gfx90a", true), 0);
  CHECK(on.status == check::Status::fail);
  CHECK_THAT(on.reason, Catch::Contains("gfx90a:xnack-: xnack- code on a GPU running xnack+"));
  CHECK(code_verdict::judge(lib, amd("gfx90a", false), 0).status == check::Status::pass);
  auto unknown = code_verdict::judge(lib, amd("gfx90a"), 0);
  CHECK(unknown.status == check::Status::warn);
  CHECK(unknown.via == "gfx90a:xnack-");
  CHECK_THAT(unknown.reason, Catch::Contains("xnack mode cannot be told"));
  // Both features: each must match.
  CHECK(code_verdict::judge(lib, amd("gfx908", false, true), 0).status == check::Status::pass);
  CHECK(code_verdict::judge(lib, amd("gfx908", false, false), 0).status == check::Status::fail);
  CHECK(code_verdict::judge(lib, amd("gfx908", true, true), 0).status == check::Status::fail);
  CHECK(code_verdict::judge(lib, amd("gfx908", false), 0).status == check::Status::warn);  // SRAM ECC unknown
  // libh_two.so's gfx906 names no feature: it loads whatever the modes are, or when they are unknown.
  auto two = kernels::list_kernels(kData / "libh_two.so");
  for (auto xnack : {std::optional<bool>(true), std::optional<bool>(false), std::optional<bool>()})
    for (auto sramecc : {std::optional<bool>(true), std::optional<bool>(false), std::optional<bool>()})
      CHECK(code_verdict::judge(two, amd("gfx906", xnack, sramecc), 0).status == check::Status::pass);
}

TEST_CASE("kernels: headers that lie are reported, never followed", "[kernels]") {
  test::TempDir tmp("kernels");
  // The first container says its entries run far past the section.
  auto big = patched(tmp, "libk_multi.so", ".nv_fatbin", 8, le<std::uint64_t>(1ull << 40));
  auto lib = kernels::list_kernels(big);
  REQUIRE(lib.problems.size() == 1);
  CHECK_THAT(lib.problems[0], Catch::Contains(".nv_fatbin at 0x") && Catch::Contains("does not fit"));
  // An entry whose payload size runs past its container.
  auto entry = patched(tmp, "libk_multi.so", ".nv_fatbin", 16 + 8, le<std::uint64_t>(1ull << 32));
  lib = kernels::list_kernels(entry);
  REQUIRE(lib.problems.size() == 1);
  CHECK_THAT(lib.problems[0], Catch::Contains("does not fit its container"));
  // An entry header size of 0 would loop forever if it were believed.
  auto zero = patched(tmp, "libk_multi.so", ".nv_fatbin", 16 + 4, le<std::uint32_t>(0));
  CHECK(kernels::list_kernels(zero).problems.size() == 1);
  // A bundle with 2^60 entries, and one whose entry lies beyond the bundle.
  auto count = patched(tmp, "libh_multi.so", ".hip_fatbin", 24, le<std::uint64_t>(1ull << 60));
  lib = kernels::list_kernels(count);
  REQUIRE(lib.problems.size() == 1);
  CHECK(lib.images.empty());
  auto offset = patched(tmp, "libh_multi.so", ".hip_fatbin", 32, le<std::uint64_t>(1ull << 50));
  CHECK_THAT(kernels::list_kernels(offset).problems.at(0), Catch::Contains("lies beyond"));
  // A CCOB whose total size is larger than its section; one with an unknown method.
  auto total = patched(tmp, "libh_ccob_v3.so", ".hip_fatbin", 8, le<std::uint64_t>(1ull << 40));
  CHECK(kernels::list_kernels(total).problems.size() == 1);
  auto method = patched(tmp, "libh_ccob_v3.so", ".hip_fatbin", 6, le<std::uint16_t>(7));
  CHECK_THAT(kernels::list_kernels(method).problems.at(0), Catch::Contains("compression method 7"));
  // Corrupt compressed data.
  auto corrupt = patched(tmp, "libh_ccob_v3.so", ".hip_fatbin", 32, std::string(16, '\x55'));
  CHECK(kernels::list_kernels(corrupt).problems.size() == 1);
}

TEST_CASE("kernels: a section table that points past the file is refused", "[kernels]") {
  test::TempDir tmp("kernels");
  auto data = read_all(kData / "libk_multi.so");
  auto cut = tmp.write("cut.so", data.substr(0, data.size() / 2));  // the section table is at the end
  CHECK_THROWS_AS(kernels::list_kernels(cut), Error);
  auto text = tmp.write("text.so", "not an ELF object at all");
  CHECK_THROWS_WITH(kernels::list_kernels(text), Catch::Contains("not an ELF object"));
}

TEST_CASE("kernels: directories are walked for shared objects, each file once", "[kernels]") {
  test::TempDir tmp("kernels");
  fs::create_directories(tmp / "site/torch/lib");
  fs::copy_file(kData / "libk_multi.so", tmp / "site/torch/lib/libk_multi.so");
  fs::create_symlink("libk_multi.so", tmp / "site/torch/lib/libk_multi.so.1");
  fs::copy_file(kData / "libh_multi.so", tmp / "site/libh.so.2");
  tmp.write("site/torch/__init__.py", "");
  auto got = kernels::collect_objects({(tmp / "site").string(), (tmp / "missing").string()}, elf::SearchContext{});
  CHECK(got.objects.size() == 2);
  CHECK(got.directories == 1);
  REQUIRE(got.unreadable.size() == 1);
  CHECK_THAT(got.unreadable[0], Catch::Contains("missing"));
}

TEST_CASE("kernels: a walk finds every shared object of a deep, wide tree, and only those", "[kernels]") {
  // The walkers share one queue of directories: every one is read once, whatever the order they finish in.
  test::TempDir tmp("kernels");
  std::vector<fs::path> expected;
  for (int a = 0; a < 12; ++a)
    for (int b = 0; b < 6; ++b) {
      auto dir = tmp / "site" / ("pkg" + std::to_string(a)) / ("sub" + std::to_string(b)) / "lib";
      fs::create_directories(dir);
      expected.push_back(tmp.write(fs::relative(dir / ("libx" + std::to_string(b) + ".so.1"), tmp.path), "x"));
      tmp.write(fs::relative(dir / "module.py", tmp.path), "");
    }
  fs::create_directories(tmp / "outside");
  tmp.write("outside/libout.so", "x");
  fs::create_directory_symlink(tmp / "outside",
                               tmp / "site/pkg0/linked");  // not followed, as recursive_directory_iterator
  fs::create_symlink(tmp / "outside/libout.so", tmp / "site/libvia.so");  // a link to a file counts
  expected.push_back(tmp / "site/libvia.so");
  fs::create_symlink(tmp / "nowhere.so", tmp / "site/libdangling.so");  // names nothing
  REQUIRE(::mkfifo((tmp / "site/libfifo.so").c_str(), 0600) == 0);      // never opened, never waited on
  fs::create_directories(tmp / "site/closed");
  tmp.write("site/closed/libhidden.so", "x");
  fs::permissions(tmp / "site/closed", fs::perms::none);
  const bool root = ::geteuid() == 0;  // root reads a directory whatever its mode
  if (root) expected.push_back(tmp / "site/closed/libhidden.so");
  auto got = kernels::collect_objects({(tmp / "site").string()}, elf::SearchContext{});
  fs::permissions(tmp / "site/closed", fs::perms::owner_all);
  std::sort(expected.begin(), expected.end());
  CHECK(got.objects == expected);
  CHECK(got.unreadable.empty());  // a directory that may not be read is skipped, as before
}

TEST_CASE("kernels: many objects are read the largest first, listed in the order given", "[kernels]") {
  test::TempDir tmp("kernels");
  auto small = tmp.write("small.so", "x"), missing = tmp / "missing.so";
  fs::copy_file(kData / "libh_multi.so", tmp / "mid.so");
  fs::copy_file(kData / "libk_multi.so", tmp / "big.so");
  REQUIRE(fs::file_size(tmp / "big.so") > fs::file_size(tmp / "mid.so"));
  std::vector<fs::path> objects = {small, tmp / "mid.so", missing, tmp / "big.so"};
  CHECK(kernels::largest_first(objects) == std::vector<std::size_t>{3, 1, 0, 2});
  // `then` sees each listing that was read, on its reader's thread; the result keeps the order given.
  std::atomic<int> seen{0};
  auto got = kernels::list_all(objects, 4, [&](kernels::Listing& l) {
    ++seen;
    l.library.problems.push_back("seen");
  });
  CHECK(seen == 2);
  REQUIRE(got.size() == 4);
  CHECK(got[3].library.path == tmp / "big.so");
  CHECK(got[3].library.problems == strings({"seen"}));
  CHECK(got[1].library.problems == strings({"seen"}));
  CHECK(!got[0].error.empty());
  CHECK(!got[2].error.empty());
}

TEST_CASE("kernels: fatbins kept as data (.ldata) are read when asked, and count", "[kernels]") {
  // libk_no_sm90.so with a .ldata holding libk_compressed.so's fatbin twice among other bytes (make_cuda.sh).
  auto plain = kernels::list_kernels(kData / "libk_ldata.so");
  CHECK(plain.images.size() == 7);  // not scanned unless asked: .ldata is read whole
  CHECK(code_verdict::judge(plain, nvidia(9, 0), 13000).status == check::Status::fail);
  CHECK(kernels::has_data_sections(kData / "libk_ldata.so"));
  CHECK_FALSE(kernels::has_data_sections(kData / "libk_no_sm90.so"));
  auto lib = kernels::list_kernels(kData / "libk_ldata.so", true);
  CHECK(lib.problems.empty());
  CHECK(lib.images.size() == 17);
  CHECK(kernels::distinct_targets(lib, kernels::Kind::cubin, kernels::Origin::embedded) == strings({"sm_75", "sm_90"}));
  CHECK(kernels::distinct_targets(lib, kernels::Kind::cubin) == strings({"sm_80", "sm_86", "sm_120"}));
  auto v = code_verdict::judge(lib, nvidia(9, 0), 13000);
  CHECK(v.status == check::Status::pass);
  CHECK(v.via == "sm_90");
  CHECK_FALSE(lib.kept_as_data_in_part);

  // With `enough`, a section no larger than its windows together is read whole by the scan: the same listing,
  // and nothing asked.
  std::size_t asked = 0;
  auto runs_on_h200 = [&](const std::vector<kernels::Image>& images) {
    ++asked;
    return std::any_of(images.begin(), images.end(),
                       [](const kernels::Image& i) { return code_verdict::cubin_runs_on(i, nvidia(9, 0)); });
  };
  auto tiled = kernels::list_kernels(kData / "libk_ldata.so", true, runs_on_h200);
  CHECK(asked == 0);
  CHECK(tiled.images.size() == 17);
  CHECK_FALSE(tiled.kept_as_data_in_part);
}

TEST_CASE("kernels: a large kept-as-data section is looked at in windows, and read whole when they are not enough",
          "[kernels]") {
  // libk_ldata.so's .ldata (27764 bytes): 100 bytes, a fatbin of 3832 bytes (sm_75, sm_90 and compute_90),
  // 20000 bytes of filler, the same fatbin. Two windows of 4 KiB, 13880 bytes apart: the first holds the
  // first copy, the second only filler; the second copy is never read.
  const kernels::Sampling two_windows{.window = 4096, .windows = 2};
  std::size_t asked = 0;
  std::vector<kernels::Image> seen;
  auto runs_on = [&](int major, int minor) {
    return [&, major, minor](const std::vector<kernels::Image>& images) {
      ++asked;
      seen = images;
      return std::any_of(images.begin(), images.end(),
                         [&](const kernels::Image& i) { return code_verdict::cubin_runs_on(i, nvidia(major, minor)); });
    };
  };
  auto in_part = kernels::list_kernels(kData / "libk_ldata.so", true, runs_on(9, 0), two_windows);
  CHECK(asked == 1);
  CHECK(seen.size() == 5);  // one copy's images: what the windows held
  CHECK(in_part.kept_as_data_in_part);
  CHECK(in_part.images.size() == 7 + 5);
  CHECK(kernels::distinct_targets(in_part, kernels::Kind::cubin, kernels::Origin::embedded) ==
        strings({"sm_75", "sm_90"}));
  CHECK(code_verdict::judge(in_part, nvidia(9, 0), 13000).via == "sm_90");

  // Not enough (a V100: nothing kept there runs on it): the section is read whole, both copies listed.
  asked = 0;
  auto whole = kernels::list_kernels(kData / "libk_ldata.so", true, runs_on(7, 0), two_windows);
  CHECK(asked == 1);
  CHECK_FALSE(whole.kept_as_data_in_part);
  CHECK(whole.images.size() == 17);
  CHECK(whole.problems.empty());
}

TEST_CASE("kernels: a cubin with no kernel is an empty module, which needs no GPU", "[kernels]") {
  auto lib = kernels::list_kernels(kData / "libk_empty.so");  // sm_75 only, no kernel (make_cuda.sh)
  CHECK(code_verdict::judge(lib, nvidia(9, 0), 13000).status == check::Status::fail);  // the headers cannot tell
  kernels::count_cubin_kernels(lib, [](const kernels::Image&) { return true; });
  for (const auto& i : lib.images) CHECK(i.kernel_count == std::size_t(0));
  auto v = code_verdict::judge(lib, nvidia(9, 0), 13000);
  CHECK(v.status == check::Status::pass);
  CHECK_THAT(v.reason, Catch::Contains("empty module"));
  // Cubins with kernels count them, read through zstd when compressed.
  auto packed = kernels::list_kernels(kData / "libk_compressed.so");
  kernels::count_cubin_kernels(packed, [](const kernels::Image&) { return true; });
  std::size_t kernels_seen = 0;
  for (const auto& i : packed.images)
    if (i.kind == kernels::Kind::cubin) {
      REQUIRE(i.kernel_count);
      kernels_seen += *i.kernel_count;
    }
  CHECK(kernels_seen >= 2);  // saxpy for sm_75 and for sm_90
  auto multi = kernels::list_kernels(kData / "libk_no_sm90.so");
  kernels::count_cubin_kernels(multi, [](const kernels::Image&) { return true; });
  CHECK(code_verdict::judge(multi, nvidia(9, 0), 13000).status == check::Status::fail);  // its cubins have kernels
}

TEST_CASE("kernels: the listing equals cuobjdump --list-elf --list-ptx, entry by entry", "[kernels]") {
  // cuobjdump.txt: CUDA 13.0's cuobjdump on these libraries, run on the GPU host (it has no 'f' in its
  // names: our sm_100f is its sm_100; relocatable __nv_relfatbin code it does not list).
  std::ifstream in(kData / "cuobjdump.txt");
  std::map<std::string, std::vector<std::string>> theirs;
  std::string line, lib;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) lib = line.substr(3), theirs[lib];
    else if (line.rfind("ELF file", 0) == 0 || line.rfind("PTX file", 0) == 0) {
      auto dot = line.rfind('.'), arch = line.rfind('.', dot - 1);
      auto target = line.substr(arch + 1, dot - arch - 1);  // sm_90a
      theirs[lib].push_back(line.rfind("PTX", 0) == 0 ? "compute_" + target.substr(3) : target);
    }
  }
  REQUIRE(theirs.size() == 4);
  for (const auto& [name, list] : theirs) {
    INFO(name);
    std::vector<std::string> ours;
    // cuobjdump numbers ELF and PTX files apart but prints them in file order, as we read them.
    for (const auto& i : kernels::list_kernels(kData / name).images) {
      if (i.relocatable) continue;
      auto t = i.target;
      if (i.arch.variant == 'f') t.pop_back();
      ours.push_back(t);
    }
    CHECK(ours == list);
  }
}

namespace {

// A plain offload bundle of `entries` code objects for gfx90a (each an id and no bytes), and the host's.
std::string plain_bundle(std::size_t entries) {
  const std::string id = "hipv4-amdgcn-amd-amdhsa--gfx90a";
  std::string b = "__CLANG_OFFLOAD_BUNDLE__" + le<std::uint64_t>(entries);
  for (std::size_t i = 0; i < entries; ++i)
    b += le<std::uint64_t>(0) + le<std::uint64_t>(0) + le<std::uint64_t>(id.size()) + id;
  return b;
}

// The bundle compressed as clang-offload-bundler -compress writes it: CCOB v3, zlib.
std::string ccob_zlib(const std::string& plain) {
  uLongf packed_size = compressBound(plain.size());
  std::string packed(packed_size, '\0');
  REQUIRE(compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size, reinterpret_cast<const Bytef*>(plain.data()),
                    plain.size(), 9) == Z_OK);
  packed.resize(packed_size);
  std::string b = "CCOB" + le<std::uint16_t>(3) + le<std::uint16_t>(0) + le<std::uint64_t>(32 + packed.size()) +
                  le<std::uint64_t>(plain.size()) + le<std::uint64_t>(0) + packed;
  b.resize((b.size() + 7) & ~std::size_t(7), '\0');
  return b;
}

// A zstd frame that says it holds `size` zero bytes, made of RLE blocks: 2 KB for 64 MiB.
std::string zstd_zeros(std::uint64_t size) {
  std::string f = le<std::uint32_t>(0xFD2FB528) + std::string(1, '\xE0') + le<std::uint64_t>(size);
  for (std::uint64_t done = 0; done < size;) {
    const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(size - done, 128 << 10));
    done += n;
    const std::uint32_t header = (n << 3) | (1 << 1) | (done == size ? 1 : 0);  // an RLE block
    f += le<std::uint32_t>(header).substr(0, 3) + std::string(1, '\0');
  }
  return f;
}

// One fatbin container of `count` sm_75 cubins, each compressed with zstd (flag 0x8000) as `payload`,
// whose entry header claims `claimed` bytes uncompressed.
std::string fatbin_of_zstd_cubins(std::size_t count, const std::string& payload, std::uint64_t claimed) {
  std::string entries;
  for (std::size_t i = 0; i < count; ++i) {
    std::string h(64, '\0');
    auto put = [&h](std::size_t at, const std::string& v) { h.replace(at, v.size(), v); };
    put(0, le<std::uint16_t>(2));  // a cubin
    put(4, le<std::uint32_t>(64));
    put(8, le<std::uint64_t>(payload.size()));
    put(16, le<std::uint32_t>(static_cast<std::uint32_t>(payload.size())));
    put(28, le<std::uint32_t>(75));
    put(40, le<std::uint64_t>(0x8000));
    put(56, le<std::uint64_t>(claimed));
    entries += h + payload;
  }
  return le<std::uint32_t>(0xBA55ED50) + le<std::uint16_t>(1) + le<std::uint16_t>(16) +
         le<std::uint64_t>(entries.size()) + entries;
}

}  // namespace

TEST_CASE("kernels: a file of 100 compressed bundles is held to the file's budget of entries", "[kernels]") {
  test::TempDir tmp("kernels");
  // Each bundle a 3.8 MB table of 70,000 entries in 4 KB of zlib: before, every one was decompressed, each
  // table parsed again for every 64 KiB block, and 7 million images listed (2.7 GB, 43 s).
  const std::string one = ccob_zlib(plain_bundle(70000));
  std::string section;
  for (int i = 0; i < 100; ++i) section += one;
  auto path = tmp.write("libbundles.so", test::elf_with_section(".hip_fatbin", section));
  auto lib = kernels::list_kernels(path);
  CHECK(lib.images.size() == 70000);  // the first bundle; the second would pass 2^17 entries
  CHECK(lib.spent.entries == 70000);
  // The second bundle is refused at its entry count, after its first block: the first's table and a block.
  CHECK(lib.spent.inflated <= 70000 * 55 + 64 + 2 * 4096);
  REQUIRE(lib.problems.size() == 1);
  CHECK_THAT(lib.problems[0], Catch::Contains(".hip_fatbin at 0x") && Catch::Contains("not read") &&
                                  Catch::Contains("passes the file's budget of 131072"));
  // A smaller budget of bytes stops the first bundle a block past it.
  kernels::RunBudget small(kernels::Budget{.file_inflated = 1 << 20});
  lib = kernels::list_kernels(path, false, {}, {}, &small);
  CHECK(lib.images.empty());
  CHECK(lib.spent.inflated <= (1 << 20) + 4096);
  REQUIRE(lib.problems.size() == 1);
  CHECK_THAT(lib.problems[0], Catch::Contains("budget of 1 MiB decompressed is spent"));
  // And the run's budget, over two files, counts both.
  kernels::RunBudget run(kernels::Budget{.run_inflated = 6 << 20});
  auto first = kernels::list_kernels(path, false, {}, {}, &run);
  auto second = kernels::list_kernels(path, false, {}, {}, &run);
  CHECK(first.images.size() == 70000);
  CHECK(second.images.empty());
  CHECK_THAT(second.problems.at(0), Catch::Contains("the run's budget of 6 MiB decompressed is spent"));
  CHECK(run.inflated() <= 6 << 20);
}

TEST_CASE("kernels: 600 zstd cubins claiming 64 MiB each are counted within the file's budget, in one buffer",
          "[kernels]") {
  test::TempDir tmp("kernels");
  // 600 frames of 64 MiB of zeros in 1.2 MB: before, each was decompressed into a fresh 64 MiB buffer
  // (38 GB written, 27-30 s).
  const auto fatbin = fatbin_of_zstd_cubins(600, zstd_zeros(64 << 20), 64 << 20);
  auto path = tmp.write("libcubins.so", test::elf_with_section(".nv_fatbin", fatbin));
  auto lib = kernels::list_kernels(path);
  REQUIRE(lib.images.size() == 600);
  CHECK(code_verdict::judge(lib, nvidia(9, 0), 13000).status == check::Status::fail);
  CHECK(kernels::empty_modules_can_decide(lib));  // only cubins: their kernels could decide
  kernels::count_cubin_kernels(lib, [](const kernels::Image&) { return true; });
  CHECK(lib.spent.inflated == std::uint64_t{64} << 20);  // the first; the second would pass 64 MiB
  REQUIRE(lib.problems.size() == 1);
  CHECK_THAT(lib.problems[0], Catch::Contains("cubins left uncounted") &&
                                  Catch::Contains("a cubin of 67108864 bytes passes the file's budget"));
  // As envcheck counts them: the first cubin is not an empty module (zeros are no ELF), so the library
  // carries kernels and the count ends there.
  auto again = kernels::list_kernels(path);
  kernels::count_cubin_kernels(
      again, [](const kernels::Image&) { return true; }, nullptr, true);
  CHECK(again.spent.inflated == std::uint64_t{64} << 20);
  CHECK(again.problems.empty());
  // A library that registers PTX carries kernels whatever its cubins hold: the headers settle it.
  auto with_ptx = kernels::list_kernels(kData / "libk_compressed.so");
  CHECK_FALSE(kernels::empty_modules_can_decide(with_ptx));
}
