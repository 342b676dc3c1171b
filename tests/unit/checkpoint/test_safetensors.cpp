#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "checkpoint/builders.hpp"
#include "checkpoint/safetensors.hpp"
#include "provkit/checkpoint/header.hpp"
#include "provkit/error.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::checkpoint;
using namespace checkpoint_test;
using json = nlohmann::json;

namespace {
FileHeader parse_all(const std::string& file) {
  auto r = parse_safetensors(file, file.size(), "m.safetensors");
  REQUIRE(std::holds_alternative<FileHeader>(r));
  return std::get<FileHeader>(r);
}
// The error parse_safetensors throws (exit 2, naming the file).
Error refusal_of(const std::string& file, std::uint64_t size = 0) {
  try {
    parse_safetensors(file, size ? size : file.size(), "m.safetensors");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).rfind("m.safetensors", 0) == 0);
    return e;
  }
  FAIL("not refused");
  return Error(ExitCode::ok, "");
}
ReasonId reason_of(const std::string& file, std::uint64_t size = 0) { return refusal_of(file, size).reason(); }
}  // namespace

TEST_CASE("safetensors: tensors, elements, bytes and offsets from the header", "[checkpoint]") {
  std::string f = safetensors_file({{"__metadata__", {{"format", "pt"}}},
                                    {"b", {{"dtype", "F8_E4M3"}, {"shape", {4, 8}}, {"data_offsets", {16, 48}}}},
                                    {"a", {{"dtype", "BF16"}, {"shape", {2, 4}}, {"data_offsets", {0, 16}}}},
                                    {"s", {{"dtype", "F32"}, {"shape", json::array()}, {"data_offsets", {48, 52}}}},
                                    {"n", {{"dtype", "F4"}, {"shape", {3, 2}}, {"data_offsets", {52, 55}}}}},
                                   55);
  auto h = parse_all(f);
  std::uint64_t header = f.size() - 55;
  CHECK(h.header_bytes == header);
  CHECK(h.metadata["format"] == "pt");
  REQUIRE(h.tensors.size() == 4);
  CHECK(h.tensors[0].name == "a");
  CHECK(h.tensors[0].elements == 8);
  CHECK(h.tensors[0].bytes == 16);
  CHECK(h.tensors[0].offset == header);
  CHECK(h.tensors[1].dtype == "F8_E4M3");
  CHECK(h.tensors[1].offset == header + 16);
  CHECK(h.tensors[2].name == "n");  // 6 elements of 4 bits: 3 bytes
  CHECK(h.tensors[2].bytes == 3);
  CHECK(h.tensors[3].elements == 1);  // a scalar
}

TEST_CASE("safetensors: asks for the length, then exactly the header", "[checkpoint]") {
  std::string f = safetensors_of({{"w", "BF16", {64, 64}}});
  auto first = parse_safetensors(f.substr(0, 3), f.size(), "m");
  REQUIRE(std::holds_alternative<NeedBytes>(first));
  CHECK(std::get<NeedBytes>(first).bytes == 8);
  std::uint64_t header = f.size() - 64 * 64 * 2;
  auto second = parse_safetensors(f.substr(0, 8), f.size(), "m");
  REQUIRE(std::holds_alternative<NeedBytes>(second));
  CHECK(std::get<NeedBytes>(second).bytes == header);
  CHECK(std::holds_alternative<FileHeader>(parse_safetensors(f.substr(0, header), f.size(), "m")));

  // read_header reads only those two ranges: no byte of tensor data.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reads;
  std::uint64_t got = 0;
  auto h = read_header(
      "m", Format::safetensors, f.size(),
      [&](std::uint64_t at, std::uint64_t n) {
        reads.emplace_back(at, n);
        return f.substr(at, n);
      },
      &got);
  CHECK(reads == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 8}, {8, header - 8}});
  CHECK(got == header);
  CHECK(h.tensors.size() == 1);
}

TEST_CASE("safetensors: hostile headers are refused naming the file", "[checkpoint]") {
  CHECK(reason_of("abc") == HeaderRefusal::truncated);
  // A length past the format's cap is refused before anything is read or allocated.
  CHECK(reason_of(le(200'000'000, 8), 300'000'000) == HeaderRefusal::too_large);
  CHECK(reason_of(le(1000, 8) + "{}") == HeaderRefusal::truncated);
  CHECK(reason_of(le(4, 8) + "nope") == HeaderRefusal::not_this_format);
  auto one = [](json entry, std::uint64_t data) { return reason_of(safetensors_file({{"t", entry}}, data)); };
  CHECK(one({{"dtype", "BF16"}, {"shape", {4}}, {"data_offsets", {0, 8}}}, 4) == HeaderRefusal::outside_data);
  CHECK(one({{"dtype", "BF16"}, {"shape", {4}}, {"data_offsets", {0, 6}}}, 8) == HeaderRefusal::size_mismatch);
  CHECK(one({{"dtype", "BF16"}, {"shape", {4}}, {"data_offsets", {8, 0}}}, 8) == HeaderRefusal::outside_data);
  CHECK(one({{"dtype", "Q9"}, {"shape", {4}}, {"data_offsets", {0, 4}}}, 4) == HeaderRefusal::unknown_dtype);
  CHECK(one({{"dtype", "BF16"}, {"shape", {-1}}, {"data_offsets", {0, 4}}}, 4) == HeaderRefusal::malformed);
  CHECK(one({{"dtype", "U8"}, {"shape", {1ull << 40, 1ull << 40}}, {"data_offsets", {0, 4}}}, 4) ==
        HeaderRefusal::malformed);
  CHECK(one({{"dtype", "F4"}, {"shape", {3}}, {"data_offsets", {0, 1}}}, 4) == HeaderRefusal::size_mismatch);
  CHECK(one({{"dtype", "U8"}, {"shape", {4}}}, 4) == HeaderRefusal::missing_field);
  CHECK(reason_of(safetensors_file({{"a", {{"dtype", "U8"}, {"shape", {8}}, {"data_offsets", {0, 8}}}},
                                    {"b", {{"dtype", "U8"}, {"shape", {8}}, {"data_offsets", {4, 12}}}}},
                                   12)) == HeaderRefusal::overlap);
  CHECK(reason_of(safetensors_file({{"__metadata__", {{"k", 1}}}}, 0)) == HeaderRefusal::malformed);
  // safetensors' own rule (Metadata::validate, read_metadata): the data covered from 0 to the file's end.
  auto u8 = [](std::uint64_t begin, std::uint64_t end) {
    return json{{"dtype", "U8"}, {"shape", {end - begin}}, {"data_offsets", {begin, end}}};
  };
  auto refusal = [](const std::string& file) { return std::string(refusal_of(file).what()); };
  CHECK(refusal(safetensors_file({{"a", u8(0, 4)}}, 6)).find("MetadataIncompleteBuffer") != std::string::npos);
  CHECK(refusal(safetensors_file({{"a", u8(0, 2)}, {"b", u8(3, 5)}}, 5)).find("InvalidOffset") != std::string::npos);
  CHECK(refusal(safetensors_file({{"a", u8(2, 4)}}, 4)).find("InvalidOffset") != std::string::npos);
  CHECK(reason_of(safetensors_file(json::object(), 1)) == HeaderRefusal::not_contiguous);
  CHECK(parse_all(safetensors_file({{"b", u8(4, 6)}, {"a", u8(0, 4)}, {"z", u8(6, 6)}}, 6)).tensors.size() == 3);
}

TEST_CASE("safetensors: the header is read as events, keeping only what a header holds", "[checkpoint]") {
  auto raw = [](const std::string& text, std::uint64_t data = 0) {
    return le(text.size(), 8) + text + std::string(data, 'z');
  };
  // Refused at the first wrong token, whatever follows: one big array, arrays nested a million deep.
  CHECK(reason_of(raw("[" + std::string(1'000'000, '['))) == HeaderRefusal::not_this_format);
  CHECK(reason_of(raw(R"({"t": [)" + std::string(100'000, '[') + "]}")) == HeaderRefusal::malformed);
  CHECK(reason_of(raw(R"({"__metadata__": [1]})")) == HeaderRefusal::malformed);
  CHECK(reason_of(raw(R"({"__metadata__": {"k": {"a": 1}}})")) == HeaderRefusal::malformed);
  // A shape that nests arrays is not a list of sizes.
  CHECK(reason_of(raw(R"({"t": {"dtype": "U8", "shape": [[4]], "data_offsets": [0, 4]}})", 4)) ==
        HeaderRefusal::malformed);
  CHECK(reason_of(raw(R"({"t": {"dtype": "U8", "shape": [4], "data_offsets": [0, [4]]}})", 4)) ==
        HeaderRefusal::missing_field);
  CHECK(reason_of(raw(R"({"t": {"dtype": 8, "shape": [4], "data_offsets": [0, 4]}})", 4)) ==
        HeaderRefusal::missing_field);
  CHECK(reason_of(raw(R"({"t": {"dtype": "U8", "shape": 4, "data_offsets": [0, 4]}})", 4)) ==
        HeaderRefusal::missing_field);
  // Fields a tensor does not have are skipped, as the safetensors crate skips them, but only 64 levels deep.
  auto h = parse_all(
      raw(R"({"t": {"dtype": "U8", "shape": [4], "x": {"y": [[1, 2], {"z": null}]}, "data_offsets": [0, 4]}})", 4));
  REQUIRE(h.tensors.size() == 1);
  CHECK(h.tensors[0].shape == std::vector<std::uint64_t>{4});
  CHECK(h.tensors[0].bytes == 4);
  CHECK(reason_of(raw(R"({"t": {"x": )" + std::string(65, '[') + std::string(65, ']') + "}}")) ==
        HeaderRefusal::too_large);
  CHECK(reason_of(raw(R"({"t": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}} junk)", 4)) ==
        HeaderRefusal::not_this_format);
  // Tensors come out by name (the order a JSON object read whole gave); a name given twice: the last counts, as
  // in safetensors 0.8.0 (which loads this file, a = 1 byte at 0, b = 3 bytes at 1; with the first "b" kept the
  // data would not be covered from 0 and it refuses it).
  auto two = parse_all(raw(R"({"b": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
                              "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},
                              "b": {"dtype": "U8", "shape": [3], "data_offsets": [1, 4]}, "__metadata__": {"format": "pt"}})",
                           4));
  REQUIRE(two.tensors.size() == 2);
  CHECK(two.tensors[0].name == "a");
  CHECK(two.tensors[1].name == "b");
  CHECK(two.tensors[1].offset == two.header_bytes + 1);
  CHECK(two.tensors[1].bytes == 3);
  CHECK(two.metadata == json{{"format", "pt"}});
}

TEST_CASE("read_local: a range of a file on disk; a FIFO named as a model is refused, never read", "[checkpoint]") {
  test::TempDir dir("read-local");
  auto file = dir.write("m.safetensors", "0123456789");
  CHECK(read_local(file, 2, 5) == "23456");
  CHECK_THROWS_WITH(read_local(file, 8, 5), Catch::Contains("cannot read 5 bytes at 8"));
  // An engine line's -m naming a FIFO: opened as the boundary opens a user's path (a plain open would wait
  // for a writer forever).
  auto fifo = dir / "model.gguf";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(read_local(fifo, 0, 8), Catch::Contains("cannot read 8 bytes at 0"));
}
