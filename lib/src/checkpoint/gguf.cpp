#include "gguf.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "provkit/error.hpp"
#include "provkit/util/checked.hpp"

namespace provkit::checkpoint {

namespace {

Error bad(const std::string& path, HeaderRefusal reason, const std::string& what) {
  return input_error(reason, path, 0, "not a valid GGUF file: " + what);
}

struct NeedMore {
  std::uint64_t bytes;
};

// The bytes read so far, consumed front to back; asking past them throws
// NeedMore (or an error when the file itself ends first).
struct Cursor {
  std::string_view have;
  std::uint64_t file_size;
  const std::string& path;
  std::uint64_t pos = 0;
  bool big_endian = false;  // every number in the header, as GGUFWriter(endianess=BIG) writes them

  void need(std::uint64_t n, const char* what) {
    if (n > file_size || pos > file_size - n)
      throw bad(path, HeaderRefusal::truncated, std::string(what) + " runs past the end of the file");
    if (pos + n > kMaxGgufHeader)
      throw bad(path, HeaderRefusal::too_large,
                "the header is longer than " + std::to_string(kMaxGgufHeader >> 20) + " MiB");
    if (pos + n > have.size()) throw NeedMore{pos + n};
  }
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v{};
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      const std::size_t shift = 8 * (big_endian ? sizeof(T) - 1 - i : i);
      v |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(have[pos + i])) << shift);
    }
    pos += sizeof(T);
    return v;
  }
  std::string_view string(const char* what, std::uint64_t max = kMaxGgufString) {
    auto n = get<std::uint64_t>(what);
    if (n > max)
      throw bad(path, HeaderRefusal::too_large,
                std::string(what) + " is " + std::to_string(n) + " bytes long (at most " + std::to_string(max) + ")");
    need(n, what);
    auto s = have.substr(pos, n);
    pos += n;
    return s;
  }
};

enum ValueType : std::uint32_t { u8, i8, u16, i16, u32, i32, f32, boolean, str, array, u64, i64, f64 };
const char* value_type_name(std::uint32_t t) {
  static const char* names[] = {"UINT8", "INT8",   "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
                                "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64",  "FLOAT64"};
  return t <= f64 ? names[t] : "?";
}
std::uint64_t fixed_size(std::uint32_t t) {
  switch (t) {
    case u8:
    case i8:
    case boolean: return 1;
    case u16:
    case i16: return 2;
    case u32:
    case i32:
    case f32: return 4;
    case u64:
    case i64:
    case f64: return 8;
    default: return 0;
  }
}

template <class To, class From>
To bits_as(From v) {
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

nlohmann::json scalar(Cursor& c, std::uint32_t type, const char* what) {
  switch (type) {
    case u8: return c.get<std::uint8_t>(what);
    case i8: return bits_as<std::int8_t>(c.get<std::uint8_t>(what));
    case u16: return c.get<std::uint16_t>(what);
    case i16: return bits_as<std::int16_t>(c.get<std::uint16_t>(what));
    case u32: return c.get<std::uint32_t>(what);
    case i32: return bits_as<std::int32_t>(c.get<std::uint32_t>(what));
    case f32: {
      float f = bits_as<float>(c.get<std::uint32_t>(what));
      return std::isfinite(f) ? nlohmann::json(f) : nlohmann::json(nullptr);
    }
    case boolean: return c.get<std::uint8_t>(what) != 0;
    case u64: return c.get<std::uint64_t>(what);
    case i64: return bits_as<std::int64_t>(c.get<std::uint64_t>(what));
    case f64: {
      double d = bits_as<double>(c.get<std::uint64_t>(what));
      return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr);
    }
    case str: {
      auto s = c.string(what);
      // Kept as text only when short and valid enough to print; the JSON dump replaces bad UTF-8.
      return std::string(s.substr(0, 256));
    }
    default:
      throw bad(c.path, HeaderRefusal::malformed,
                std::string(what) + " has the unknown value type " + std::to_string(type));
  }
}

}  // namespace

// The one table of ggml types and llama.cpp file types, transcribed from
// gguf-py 0.7.0 (Debian unstable's python3-gguf 1:0.7.0+dfsg-2, llama.cpp
// 0.7.0): gguf/constants.py GGMLQuantizationType + GGML_QUANT_SIZES, and
// LlamaFileType with the ggml type llama-quant.cpp stores most weights in.
// tests/integration/hf-fetch/test_gguf_py.py compares both against gguf-py itself.
namespace {

struct GgmlTypeRow {
  std::uint32_t id;
  GgmlType type;
};
constexpr GgmlTypeRow kGgmlTypes[] = {
    {0, {"F32", 1, 4}},         {1, {"F16", 1, 2}},         {2, {"Q4_0", 32, 18}},      {3, {"Q4_1", 32, 20}},
    {6, {"Q5_0", 32, 22}},      {7, {"Q5_1", 32, 24}},      {8, {"Q8_0", 32, 34}},      {9, {"Q8_1", 32, 36}},
    {10, {"Q2_K", 256, 84}},    {11, {"Q3_K", 256, 110}},   {12, {"Q4_K", 256, 144}},   {13, {"Q5_K", 256, 176}},
    {14, {"Q6_K", 256, 210}},   {15, {"Q8_K", 256, 292}},   {16, {"IQ2_XXS", 256, 66}}, {17, {"IQ2_XS", 256, 74}},
    {18, {"IQ3_XXS", 256, 98}}, {19, {"IQ1_S", 256, 50}},   {20, {"IQ4_NL", 32, 18}},   {21, {"IQ3_S", 256, 110}},
    {22, {"IQ2_S", 256, 82}},   {23, {"IQ4_XS", 256, 136}}, {24, {"I8", 1, 1}},         {25, {"I16", 1, 2}},
    {26, {"I32", 1, 4}},        {27, {"I64", 1, 8}},        {28, {"F64", 1, 8}},        {29, {"IQ1_M", 256, 56}},
    {30, {"BF16", 1, 2}},       {34, {"TQ1_0", 256, 54}},   {35, {"TQ2_0", 256, 66}},   {39, {"MXFP4", 32, 17}},
    {40, {"NVFP4", 64, 36}},    {41, {"Q1_0", 128, 18}},    {42, {"Q2_0", 64, 18}},
};

struct FileTypeRow {
  std::uint32_t id;
  GgufFileType type;
};
constexpr FileTypeRow kFileTypes[] = {
    {0, {"F32", "F32", 1}},
    {1, {"F16", "F16", 1}},
    {2, {"Q4_0", "Q4_0", 32}},
    {3, {"Q4_1", "Q4_1", 32}},
    {4, {"Q4_1_SOME_F16", "Q4_1", 32}},  // llama.h still names it; gguf-py comments it out
    {7, {"Q8_0", "Q8_0", 32}},
    {8, {"Q5_0", "Q5_0", 32}},
    {9, {"Q5_1", "Q5_1", 32}},
    {10, {"Q2_K", "Q2_K", 256}},
    {11, {"Q3_K_S", "Q3_K", 256}},
    {12, {"Q3_K_M", "Q3_K", 256}},
    {13, {"Q3_K_L", "Q3_K", 256}},
    {14, {"Q4_K_S", "Q4_K", 256}},
    {15, {"Q4_K_M", "Q4_K", 256}},
    {16, {"Q5_K_S", "Q5_K", 256}},
    {17, {"Q5_K_M", "Q5_K", 256}},
    {18, {"Q6_K", "Q6_K", 256}},
    {19, {"IQ2_XXS", "IQ2_XXS", 256}},
    {20, {"IQ2_XS", "IQ2_XS", 256}},
    {21, {"Q2_K_S", "Q2_K", 256}},
    {22, {"IQ3_XS", "IQ3_S", 256}},
    {23, {"IQ3_XXS", "IQ3_XXS", 256}},
    {24, {"IQ1_S", "IQ1_S", 256}},
    {25, {"IQ4_NL", "IQ4_NL", 32}},
    {26, {"IQ3_S", "IQ3_S", 256}},
    {27, {"IQ3_M", "IQ3_S", 256}},
    {28, {"IQ2_S", "IQ2_S", 256}},
    {29, {"IQ2_M", "IQ2_S", 256}},
    {30, {"IQ4_XS", "IQ4_XS", 256}},
    {31, {"IQ1_M", "IQ1_M", 256}},
    {32, {"BF16", "BF16", 1}},
    {36, {"TQ1_0", "TQ1_0", 256}},
    {37, {"TQ2_0", "TQ2_0", 256}},
    {38, {"MXFP4_MOE", "MXFP4", 32}},
    {39, {"NVFP4", "NVFP4", 64}},
    {40, {"Q1_0", "Q1_0", 128}},
    {41, {"Q2_0", "Q2_0", 64}},
};

}  // namespace

std::optional<GgmlType> ggml_type(std::uint32_t id) {
  for (const auto& row : kGgmlTypes)
    if (row.id == id) return row.type;
  return std::nullopt;  // never defined, or retired (4, 5, 31-33, 36-38)
}

std::optional<GgufFileType> gguf_file_type(std::uint32_t id) {
  for (const auto& row : kFileTypes)
    if (row.id == id) return row.type;
  return std::nullopt;  // never defined, or retired (5, 6, 33-35)
}

ParseResult parse_gguf(std::string_view have, std::uint64_t file_size, const std::string& path) {
  Cursor c{have, file_size, path};
  try {
    c.need(4, "the magic");
    if (have.substr(0, 4) != "GGUF")
      throw bad(path, HeaderRefusal::not_this_format, "it does not start with the magic 'GGUF'");
    c.pos = 4;
    FileHeader h;
    h.path = path;
    h.format = Format::gguf;
    h.file_size = file_size;
    h.gguf_version = c.get<std::uint32_t>("the version");
    // GGUFReader's test: a version whose low 16 bits are zero was written in the
    // other byte order, and every number after the magic is read that way.
    if ((h.gguf_version & 0xFFFF) == 0) {
      c.big_endian = true;
      c.pos = 4;
      h.gguf_version = c.get<std::uint32_t>("the version");
      h.gguf_big_endian = true;
    }
    if (h.gguf_version != 2 && h.gguf_version != 3)
      throw bad(path, HeaderRefusal::unsupported_version,
                "version " + std::to_string(h.gguf_version) + " is not one this reader knows (2 and 3)");
    auto tensor_count = c.get<std::uint64_t>("the tensor count");
    auto kv_count = c.get<std::uint64_t>("the key/value count");
    if (tensor_count > kMaxGgufTensors)
      throw bad(path, HeaderRefusal::too_large, "it claims " + std::to_string(tensor_count) + " tensors");
    if (kv_count > kMaxGgufKeys)
      throw bad(path, HeaderRefusal::too_large, "it claims " + std::to_string(kv_count) + " metadata keys");

    std::uint64_t alignment = 32;
    for (std::uint64_t i = 0; i < kv_count; ++i) {
      std::string key(c.string("a metadata key", 65535));
      auto type = c.get<std::uint32_t>("a metadata value type");
      if (type == array) {
        auto item_type = c.get<std::uint32_t>("an array's item type");
        auto count = c.get<std::uint64_t>("an array's length");
        if (count > kMaxGgufArray)
          throw bad(path, HeaderRefusal::too_large,
                    "the array '" + key + "' claims " + std::to_string(count) + " items");
        if (item_type == array) throw bad(path, HeaderRefusal::malformed, "the array '" + key + "' holds arrays");
        if (auto size = fixed_size(item_type)) {
          c.need(size * count, "an array");
          if (count > kMaxGgufArrayShown) {
            c.pos += size * count;
          } else {
            // Per-layer facts (head_count_kv, sliding_window_pattern, recurrent_layers): their values, not a count.
            nlohmann::json items = nlohmann::json::array();
            for (std::uint64_t j = 0; j < count; ++j) items.push_back(scalar(c, item_type, "an array's item"));
            h.metadata[key] = std::move(items);
            continue;
          }
        } else if (item_type == str) {
          c.need(count * 8, "an array of strings");  // each at least its length: ask for that much at once
          for (std::uint64_t j = 0; j < count; ++j) c.string("an array's string");
        } else {
          throw bad(path, HeaderRefusal::malformed,
                    "the array '" + key + "' has the unknown item type " + std::to_string(item_type));
        }
        h.metadata[key] = "[" + std::to_string(count) + " " + value_type_name(item_type) + "]";
        continue;
      }
      nlohmann::json v = scalar(c, type, "a metadata value");
      if (key == "general.alignment") {
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0 ||
            (v.get<std::uint64_t>() & (v.get<std::uint64_t>() - 1)) || v.get<std::uint64_t>() > (1u << 20))
          throw bad(path, HeaderRefusal::malformed, "general.alignment is not a power of two up to 1 MiB");
        alignment = v.get<std::uint64_t>();
      }
      h.metadata[key] = std::move(v);
    }

    // Each tensor info is at least 24 bytes (name length, dims, type, offset): ask for that much at once.
    c.need(tensor_count * 24, "the list of tensor infos");
    h.tensors.reserve(std::min<std::uint64_t>(tensor_count, 4096));
    for (std::uint64_t i = 0; i < tensor_count; ++i) {
      Tensor t;
      t.name = c.string("a tensor name", 65535);
      auto dims = c.get<std::uint32_t>("a tensor's dimension count");
      if (dims > 4)
        throw bad(path, HeaderRefusal::malformed,
                  "tensor '" + t.name + "' has " + std::to_string(dims) + " dimensions (ggml has at most 4)");
      t.elements = 1;
      for (std::uint32_t d = 0; d < dims; ++d) {
        t.shape.push_back(c.get<std::uint64_t>("a tensor's dimension"));
        auto elements = util::checked_mul(t.elements, t.shape.back());
        if (!elements || (t.elements = *elements) > (1ull << 50))
          throw bad(path, HeaderRefusal::malformed, "tensor '" + t.name + "' has an impossible shape");
      }
      auto type_id = c.get<std::uint32_t>("a tensor's type");
      auto type = ggml_type(type_id);
      if (!type)
        throw bad(path, HeaderRefusal::unknown_dtype,
                  "tensor '" + t.name + "' has the unknown ggml type " + std::to_string(type_id));
      t.dtype = type->name;
      if (!t.shape.empty() && t.shape[0] % type->block_size != 0)
        throw bad(path, HeaderRefusal::size_mismatch,
                  "tensor '" + t.name + "' has " + std::to_string(t.shape[0]) +
                      " elements per row, not a multiple of " + t.dtype + "'s block of " +
                      std::to_string(type->block_size));
      if (t.elements % type->block_size != 0)
        throw bad(path, HeaderRefusal::size_mismatch,
                  "tensor '" + t.name + "' is not a whole number of " + t.dtype + " blocks");
      t.bytes = t.elements / type->block_size * type->block_bytes;
      t.offset = c.get<std::uint64_t>("a tensor's offset");  // relative to the data, fixed below
      if (t.offset % alignment != 0)
        throw bad(path, HeaderRefusal::misaligned,
                  "tensor '" + t.name + "' is not aligned to " + std::to_string(alignment));
      h.tensors.push_back(std::move(t));
    }
    std::uint64_t data_start = (c.pos + alignment - 1) / alignment * alignment;
    if (data_start > file_size)
      throw bad(path, HeaderRefusal::truncated, "the tensor data would start past the end of the file");
    h.header_bytes = c.pos;
    const std::uint64_t data_size = file_size - data_start;
    for (auto& t : h.tensors) {
      if (t.offset > data_size || t.bytes > data_size - t.offset)
        throw bad(path, HeaderRefusal::outside_data,
                  "tensor '" + t.name + "' (" + std::to_string(t.bytes) + " bytes at " + std::to_string(t.offset) +
                      ") lies outside the " + std::to_string(data_size) + " bytes of data");
      t.offset += data_start;
    }
    if (auto o = first_overlap(h.tensors))
      throw bad(path, HeaderRefusal::overlap, "tensors '" + o->first->name + "' and '" + o->second->name + "' overlap");
    return h;
  } catch (const NeedMore& m) {
    return NeedBytes{m.bytes};
  }
}

}  // namespace provkit::checkpoint
