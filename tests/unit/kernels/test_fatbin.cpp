// kernels/fatbin.cpp: the fatbin containers of a section, read by the scan and
// side by side from the registration table (.nvFatBinSegment), the same listing either way.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "provkit/elf/sections.hpp"
#include "provkit/kernels/listing.hpp"
#include "provkit/util/log.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(PROVKIT_TEST_DATA) / "kernels";

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// What a listing says, entry by entry, in its order.
std::vector<std::string> entries(const kernels::Library& lib) {
  std::vector<std::string> out;
  for (const auto& i : lib.images)
    out.push_back(i.target + "@" + std::to_string(i.payload_offset) + "+" + std::to_string(i.payload_size));
  return out;
}

// The trace lines that say how `run` read its containers (only the trace tells).
template <class F>
std::vector<std::string> side_by_side_lines(F&& run) {
  std::vector<std::string> lines;
  util::log::set_sink([&](std::string_view, std::string_view text) {
    if (text.find("side by side") != std::string_view::npos) lines.emplace_back(text);
  });
  run();
  util::log::set_sink({});
  return lines;
}

kernels::Library listed(const fs::path& path, const std::vector<std::uint64_t>& starts) {
  elf::ObjectFile f(path);
  auto sections = elf::read_sections(f);
  auto fatbin = elf::find_section(sections, ".nv_fatbin");
  REQUIRE(fatbin);
  kernels::Library lib;
  kernels::read_fatbins(f, *fatbin, lib, false, starts);
  return lib;
}

}  // namespace

TEST_CASE("fatbin: nvcc's registration table points at the containers the runtime registers", "[kernels][fatbin]") {
  const auto path = kData / "libk_multi.so";  // nvcc 13.0 and GNU ld: one registered container of two
  elf::ObjectFile f(path);
  auto sections = elf::read_sections(f);
  auto fatbin = elf::find_section(sections, ".nv_fatbin");
  REQUIRE(fatbin);
  auto starts = kernels::registered_fatbins(f, sections, *fatbin);
  REQUIRE(starts.size() == 1);
  for (auto s : starts) {
    CHECK(s >= fatbin->offset);
    CHECK(s < fatbin->offset + fatbin->size);
    CHECK(f.read(s, 4, "magic") == std::string("\x50\xed\x55\xba", 4));
  }
  // Read side by side, read by the scan, read from a table naming only some: one listing.
  const auto scanned = entries(listed(path, {}));
  CHECK(scanned.size() == 9);
  CHECK(entries(listed(path, starts)) == scanned);
  // A table naming a container the scan would not come to first is not taken.
  CHECK(entries(listed(path, {starts[0] + 8})) == scanned);
  CHECK(entries(kernels::list_kernels(path)) == scanned);
}

TEST_CASE("fatbin: a registration table the linker left to relocations is not followed", "[kernels][fatbin]") {
  // lld leaves a RELA target's bytes zero: the addresses are then not in the file.
  test::TempDir tmp;
  const auto source = kData / "libk_multi.so";
  std::uint64_t table_offset = 0, table_size = 0;
  {
    elf::ObjectFile f(source);
    auto table = elf::find_section(elf::read_sections(f), ".nvFatBinSegment");
    REQUIRE(table);
    table_offset = table->offset, table_size = table->size;
  }
  auto data = read_all(source);
  for (std::uint64_t w = 0; w + 24 <= table_size; w += 24) std::memset(data.data() + table_offset + w + 8, 0, 8);
  auto path = tmp.write("zeroed.so", data);
  elf::ObjectFile f(path);
  auto sections = elf::read_sections(f);
  CHECK(kernels::registered_fatbins(f, sections, *elf::find_section(sections, ".nv_fatbin")).empty());
  CHECK(entries(kernels::list_kernels(path)) == entries(kernels::list_kernels(source)));
}

TEST_CASE("fatbin: containers are read side by side wherever the scan meets them", "[kernels][fatbin]") {
  // libk_multi.so's .nv_fatbin begins with a container its table does not name, as cuSOLVER's, cuSPARSE's and
  // cuRAND's do: the one after it is still read apart. With no table, the containers' own headers say where
  // each starts. Only the trace tells how a listing was read.
  const auto path = kData / "libk_multi.so";
  std::vector<std::string> from_table, from_headers;
  const auto lines = side_by_side_lines([&] {
    from_table = entries(kernels::list_kernels(path));
    from_headers = entries(listed(path, {}));
  });
  CHECK(from_table.size() == 9);
  CHECK(from_headers == from_table);
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Catch::Contains("; 1 of 1 containers read side by side in 1 batch (registered)"));
  CHECK_THAT(lines[1], Catch::Contains("; 2 of 2 containers read side by side in 1 batch (found by their headers)"));

  // The second container's header lies: the headers' chain ends before it, and the scan meets it and says so.
  test::TempDir tmp;
  std::uint64_t second = 0;
  {
    elf::ObjectFile f(path);
    auto sections = elf::read_sections(f);
    auto starts = kernels::registered_fatbins(f, sections, *elf::find_section(sections, ".nv_fatbin"));
    REQUIRE(starts.size() == 1);
    second = starts[0];
  }
  auto data = read_all(path);
  const std::uint64_t lie = 1ull << 40;
  std::memcpy(data.data() + second + 8, &lie, 8);
  const auto lying = tmp.write("lying.so", data);
  auto lib = listed(lying, {});
  CHECK(entries(lib) == std::vector<std::string>(from_table.begin(), from_table.begin() + 4));
  REQUIRE(lib.problems.size() == 1);
  CHECK_THAT(lib.problems[0], Catch::Contains("a fatbin header that does not fit its section"));
}

TEST_CASE("fatbin: a section of thousands of containers is read a batch at a time, in order", "[kernels][fatbin]") {
  // 10000 containers of one sm_90 cubin header each (no payload), back to back: more than two batches. Found by
  // their headers, named by a table, or with a header that lies in the middle: the scan's listing each time.
  constexpr std::size_t kCount = 10000, kEach = 16 + 64;
  std::string data(kCount * kEach, '\0');
  auto put = [&](std::size_t at, auto value) { std::memcpy(data.data() + at, &value, sizeof value); };
  std::vector<std::uint64_t> starts;
  for (std::size_t i = 0; i < kCount; ++i) {
    const std::size_t c = i * kEach;
    starts.push_back(c);
    put(c, std::uint32_t{0xBA55ED50});
    put(c + 4, std::uint16_t{1});
    put(c + 6, std::uint16_t{16});
    put(c + 8, std::uint64_t{64});
    put(c + 16, std::uint16_t{2});                                  // a cubin
    put(c + 20, std::uint32_t{64});                                 // its header's size, no payload
    put(c + 16 + 28, static_cast<std::uint32_t>(90 + i % 2 * 10));  // sm_90, sm_100 in turn
  }
  test::TempDir tmp;
  auto list = [&](const std::string& bytes, const std::vector<std::uint64_t>& table) {
    const auto path = tmp.write("fatbins.bin", bytes);
    elf::ObjectFile f(path);
    const elf::Section section{.name = ".nv_fatbin", .type = 1, .address = 0, .offset = 0, .size = bytes.size()};
    kernels::Library lib;
    kernels::read_fatbins(f, section, lib, false, table);
    return lib;
  };
  kernels::Library found, named;
  const auto lines = side_by_side_lines([&] {
    found = list(data, {});
    named = list(data, starts);
  });
  REQUIRE(found.images.size() == kCount);
  CHECK(found.problems.empty());
  CHECK(found.images[0].target == "sm_90");
  CHECK(found.images[4097].target == "sm_100");
  CHECK(found.images[kCount - 1].payload_offset == kCount * kEach);
  CHECK(entries(named) == entries(found));
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0],
             Catch::Contains("10000 of 10000 containers read side by side in 3 batches (found by their headers)"));
  CHECK_THAT(lines[1], Catch::Contains("10000 of 10000 containers read side by side in 3 batches (registered)"));

  // Container 5000's header says its entries run past the section: the 5000 before it are listed, then the
  // problem, whichever way the containers were found.
  auto lying = data;
  const std::uint64_t lie = 1ull << 40;
  std::memcpy(lying.data() + 5000 * kEach + 8, &lie, 8);
  for (const auto& table : {std::vector<std::uint64_t>{}, starts}) {
    const auto lib = list(lying, table);
    CHECK(lib.images.size() == 5000);
    REQUIRE(lib.problems.size() == 1);
    CHECK_THAT(lib.problems[0], Catch::Contains(".nv_fatbin at 0x61a80: a fatbin header that does not fit"));
  }
}
