#include <catch2/catch.hpp>

#include "checkpoint/builders.hpp"
#include "checkpoint/gguf.hpp"
#include "provkit/error.hpp"

using namespace provkit;
using namespace provkit::checkpoint;
using namespace checkpoint_test;

namespace {
// The reason of the error parse_gguf throws (exit 2, naming the file); nullopt when it asks for more bytes.
std::optional<ReasonId> reason_of(const std::string& file, std::uint64_t size = 0) {
  try {
    auto r = parse_gguf(file, size ? size : file.size(), "m.gguf");
    if (std::holds_alternative<NeedBytes>(r)) return std::nullopt;
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).rfind("m.gguf", 0) == 0);
    return e.reason();
  }
  FAIL("not refused");
  return std::nullopt;
}
std::string header(std::uint32_t version, std::uint64_t tensors, std::uint64_t kvs) {
  return "GGUF" + le(version, 4) + le(tensors, 8) + le(kvs, 8);
}
}  // namespace

TEST_CASE("ggml types: names, blocks and bytes as ggml.c's type_traits", "[checkpoint]") {
  CHECK(ggml_type(0)->name == "F32");
  CHECK(ggml_type(12)->name == "Q4_K");
  CHECK(ggml_type(12)->block_size == 256);
  CHECK(ggml_type(12)->block_bytes == 144);
  CHECK(ggml_type(8)->block_bytes == 34);
  CHECK(ggml_type(23)->name == "IQ4_XS");
  CHECK(ggml_type(23)->block_bytes == 136);
  CHECK(ggml_type(14)->block_bytes == 210);
  CHECK(ggml_type(30)->name == "BF16");
  CHECK(ggml_type(39)->name == "MXFP4");
  CHECK(ggml_type(40)->name == "NVFP4");  // gguf-py 0.7.0: blocks of 64 in 36 bytes
  CHECK(ggml_type(40)->block_size == 64);
  CHECK(ggml_type(40)->block_bytes == 36);
  CHECK(gguf_file_type(39)->name == "NVFP4");
  CHECK_FALSE(ggml_type(4));   // Q4_2, retired
  CHECK_FALSE(ggml_type(31));  // Q4_0_4_4, retired
  CHECK_FALSE(ggml_type(43));  // not (yet) in gguf-py
}

TEST_CASE("gguf: metadata of every type, tensors with their ggml bytes", "[checkpoint]") {
  std::vector<std::string> kv = {
      kv_string("general.architecture", "llama"),
      kv_u32("llama.context_length", 4096),
      gguf_str("f") + le(6, 4) + le(0x3f800000, 4),                                          // FLOAT32 1.0
      gguf_str("b") + le(7, 4) + le(1, 1),                                                   // BOOL
      gguf_str("i8") + le(1, 4) + le(0xff, 1),                                               // INT8 -1
      gguf_str("u64") + le(10, 4) + le(1ull << 40, 8),                                       // UINT64
      gguf_str("d") + le(12, 4) + le(0x4000000000000000ull, 8),                              // FLOAT64 2.0
      gguf_str("tokens") + le(9, 4) + le(8, 4) + le(2, 8) + gguf_str("a") + gguf_str("bc"),  // ARRAY of STRING
      gguf_str("scores") + le(9, 4) + le(6, 4) + le(3, 8) + std::string(12, '\0'),           // ARRAY of FLOAT32
  };
  std::string f = gguf_file(kv, {{"token_embd.weight", 12, {256, 4}, 4 * 144},
                                 {"blk.0.attn_q.weight", 8, {64, 2}, 2 * 2 * 34},
                                 {"output_norm.weight", 0, {64}, 256}});
  auto r = parse_gguf(f, f.size(), "m.gguf");
  REQUIRE(std::holds_alternative<FileHeader>(r));
  auto& h = std::get<FileHeader>(r);
  CHECK(h.gguf_version == 3);
  CHECK(h.metadata["general.architecture"] == "llama");
  CHECK(h.metadata["llama.context_length"] == 4096);
  CHECK(h.metadata["f"] == 1.0);
  CHECK(h.metadata["b"] == true);
  CHECK(h.metadata["i8"] == -1);
  CHECK(h.metadata["u64"] == (1ull << 40));
  CHECK(h.metadata["d"] == 2.0);
  CHECK(h.metadata["tokens"] == "[2 STRING]");
  CHECK(h.metadata["scores"] == nlohmann::json::array({0.0, 0.0, 0.0}));
  REQUIRE(h.tensors.size() == 3);
  CHECK(h.tensors[0].dtype == "Q4_K");
  CHECK(h.tensors[0].elements == 1024);
  CHECK(h.tensors[0].bytes == 576);
  CHECK(h.tensors[1].dtype == "Q8_0");
  CHECK(h.tensors[1].bytes == 136);
  CHECK(h.tensors[2].bytes == 256);
  CHECK(h.tensors[0].offset % 32 == 0);
  CHECK(h.tensors[0].offset >= h.header_bytes);
  CHECK(h.tensors[1].offset == h.tensors[0].offset + 576);

  // Cut anywhere inside the header, the parser asks for more, never more than the file.
  for (std::uint64_t cut = 0; cut < h.header_bytes; ++cut) {
    auto p = parse_gguf(std::string_view(f).substr(0, cut), f.size(), "m.gguf");
    REQUIRE(std::holds_alternative<NeedBytes>(p));
    CHECK(std::get<NeedBytes>(p).bytes > cut);
    CHECK(std::get<NeedBytes>(p).bytes <= h.header_bytes);
  }
  // read_header gets there from a small first read.
  int reads = 0;
  auto again = read_header(
      "m.gguf", Format::gguf, f.size(),
      [&](std::uint64_t at, std::uint64_t n) {
        ++reads;
        return f.substr(at, n);
      },
      nullptr, 16);
  CHECK(again.tensors.size() == 3);
  CHECK(reads > 1);
}

TEST_CASE("gguf: arrays of numbers and bools are their values; long ones and strings a summary", "[checkpoint]") {
  std::string kv_i32 = le(0xfffffffe, 4);  // -2
  std::vector<std::string> kv = {
      gguf_str("llama.attention.head_count_kv") + le(9, 4) + le(5, 4) + le(4, 8) + le(8, 4) + le(8, 4) + le(2, 4) +
          kv_i32,  // INT32
      gguf_str("gemma3.attention.sliding_window_pattern") + le(9, 4) + le(7, 4) + le(3, 8) +
          std::string("\1\1\0", 3),                                                // BOOL
      gguf_str("u16") + le(9, 4) + le(2, 4) + le(2, 8) + le(65535, 2) + le(7, 2),  // UINT16
      gguf_str("long") + le(9, 4) + le(4, 4) + le(kMaxGgufArrayShown + 1, 8) +
          std::string((kMaxGgufArrayShown + 1) * 4, '\0'),  // UINT32, one past the bound
  };
  std::string f = gguf_file(kv, {{"output_norm.weight", 0, {64}, 256}});
  auto r = parse_gguf(f, f.size(), "m.gguf");
  REQUIRE(std::holds_alternative<FileHeader>(r));
  auto& h = std::get<FileHeader>(r);
  CHECK(h.metadata["llama.attention.head_count_kv"] == nlohmann::json::array({8, 8, 2, -2}));
  CHECK(h.metadata["gemma3.attention.sliding_window_pattern"] == nlohmann::json::array({true, true, false}));
  CHECK(h.metadata["u16"] == nlohmann::json::array({65535, 7}));
  CHECK(h.metadata["long"] == "[" + std::to_string(kMaxGgufArrayShown + 1) + " UINT32]");
  REQUIRE(h.tensors.size() == 1);
  CHECK(h.tensors[0].offset >= h.header_bytes);
}

TEST_CASE("gguf: a large vocabulary is read in a few ranges, not one per string", "[checkpoint]") {
  std::string tokens = gguf_str("tokenizer.ggml.tokens") + le(9, 4) + le(8, 4) + le(5000, 8);
  for (int i = 0; i < 5000; ++i) tokens += gguf_str("tok" + std::to_string(i));
  std::string f = gguf_file({tokens}, {{"t", 0, {16}, 64}});
  std::vector<std::uint64_t> sizes;
  auto h = read_header(
      "m.gguf", Format::gguf, f.size(),
      [&](std::uint64_t at, std::uint64_t n) {
        sizes.push_back(n);
        return f.substr(at, n);
      },
      nullptr, 64);
  CHECK(h.metadata["tokenizer.ggml.tokens"] == "[5000 STRING]");
  // 64 bytes, then 8 bytes per announced string at once, then doubling: 4 reads (12 by doubling alone).
  CHECK(sizes.size() <= 4);
  std::uint64_t read = 0;
  for (auto n : sizes) read += n;
  CHECK(read < 2 * h.header_bytes);
}

TEST_CASE("gguf: general.alignment moves the data", "[checkpoint]") {
  std::string f = gguf_file({gguf_str("general.alignment") + le(4, 4) + le(64, 4)}, {{"t", 0, {16}, 64}}, 3, 64);
  auto h = std::get<FileHeader>(parse_gguf(f, f.size(), "m.gguf"));
  CHECK(h.tensors[0].offset % 64 == 0);
  CHECK(reason_of(gguf_file({gguf_str("general.alignment") + le(4, 4) + le(48, 4)}, {})) == HeaderRefusal::malformed);
}

TEST_CASE("gguf: hostile headers are refused naming the file, without huge allocations", "[checkpoint]") {
  CHECK(reason_of("GGML" + std::string(20, '\0')) == HeaderRefusal::not_this_format);
  CHECK(reason_of(header(1, 0, 0)) == HeaderRefusal::unsupported_version);
  // Big-endian (GGUFReader's rule: a version with zero low 16 bits): every number read so, then checked the same.
  auto be = [](std::uint64_t v, int n) {
    std::string out;
    for (int i = n - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
    return out;
  };
  auto big = std::get<FileHeader>(
      parse_gguf("GGUF" + be(3, 4) + be(0, 8) + be(0, 8) + std::string(8, '\0'), 32, "m.gguf"));
  CHECK(big.gguf_big_endian);
  CHECK(big.gguf_version == 3);
  CHECK(reason_of("GGUF" + be(1, 4) + be(0, 8) + be(0, 8)) == HeaderRefusal::unsupported_version);
  CHECK(reason_of("GGUF" + be(3, 4) + be(1ull << 40, 8) + be(0, 8)) == HeaderRefusal::too_large);
  CHECK(reason_of(header(3, 1ull << 40, 0)) == HeaderRefusal::too_large);
  CHECK(reason_of(header(3, 0, 1ull << 40)) == HeaderRefusal::too_large);
  // A key claiming 2^60 bytes: refused from the length alone.
  CHECK(reason_of(header(3, 0, 1) + le(1ull << 60, 8)) == HeaderRefusal::too_large);
  // A string longer than the file: refused, not asked for.
  CHECK(reason_of(header(3, 0, 1) + le(1000, 8) + "abc") == HeaderRefusal::truncated);
  CHECK(reason_of(header(3, 0, 1) + gguf_str("a") + le(9, 4) + le(4, 4) + le(1ull << 50, 8)) ==
        HeaderRefusal::too_large);
  CHECK(reason_of(header(3, 0, 1) + gguf_str("a") + le(9, 4) + le(9, 4) + le(1, 8)) == HeaderRefusal::malformed);
  CHECK(reason_of(header(3, 0, 1) + gguf_str("a") + le(13, 4) + le(0, 8)) == HeaderRefusal::malformed);
  CHECK(reason_of(gguf_file({}, {{"t", 77, {32}, 32}})) == HeaderRefusal::unknown_dtype);
  CHECK(reason_of(gguf_file({}, {{"t", 12, {100}, 144}})) == HeaderRefusal::size_mismatch);
  CHECK(reason_of(header(3, 1, 0) + gguf_str("t") + le(5, 4) + std::string(64, '\0')) == HeaderRefusal::malformed);
  CHECK(reason_of(header(3, 1000, 0) + std::string(64, '\0')) == HeaderRefusal::truncated);
  // Offsets that lie: past the data, into another tensor, unaligned.
  std::string one = header(3, 1, 0) + gguf_str("t") + le(1, 4) + le(8, 8) + le(0, 4) + le(32, 8);
  one += std::string(32 - one.size() % 32, '\0') + std::string(32, 'x');
  CHECK(reason_of(one) == HeaderRefusal::outside_data);
  std::string two = header(3, 2, 0);
  for (auto name : {"a", "b"}) two += gguf_str(name) + le(1, 4) + le(8, 8) + le(0, 4) + le(0, 8);
  two += std::string(32 - two.size() % 32, '\0') + std::string(32, 'x');
  CHECK(reason_of(two) == HeaderRefusal::overlap);
  std::string odd = header(3, 1, 0) + gguf_str("t") + le(1, 4) + le(8, 8) + le(0, 4) + le(4, 8);
  CHECK(reason_of(odd + std::string(64, '\0')) == HeaderRefusal::misaligned);
}
