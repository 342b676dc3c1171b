#include "provkit/checkpoint/safetensors.hpp"

#include <algorithm>
#include <limits>

#include "provkit/error.hpp"

namespace provkit::checkpoint {

namespace {

using json = nlohmann::json;

Error bad(const std::string& path, const std::string& what) {
  return input_error(path, 0, "not a valid safetensors file: " + what);
}

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

}  // namespace

std::optional<unsigned> safetensors_dtype_bits(std::string_view d) {
  static const std::pair<std::string_view, unsigned> table[] = {
      {"BOOL", 8}, {"U8", 8},   {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
      {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32},    {"U32", 32},    {"F32", 32},    {"F64", 64},
      {"I64", 64}, {"U64", 64}, {"F4", 4},   {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"C64", 64}};
  for (const auto& [name, bits] : table)
    if (name == d) return bits;
  return std::nullopt;
}

ParseResult parse_safetensors(std::string_view have, std::uint64_t file_size, const std::string& path) {
  if (file_size < 8) throw bad(path, "the file is " + std::to_string(file_size) + " bytes, shorter than the 8-byte header length");
  if (have.size() < 8) return NeedBytes{8};
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(have[i]);
  if (n > kMaxSafetensorsHeader)
    throw bad(path, "the header length " + std::to_string(n) + " is over the format's limit of " +
                        std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (n + 8 > file_size)
    throw bad(path, "the header length " + std::to_string(n) + " runs past the end of the file (" +
                        std::to_string(file_size) + " bytes)");
  if (have.size() < n + 8) return NeedBytes{n + 8};

  json doc = json::parse(have.substr(8, n), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw bad(path, "the header is not a JSON object");
  FileHeader h;
  h.path = path;
  h.format = Format::safetensors;
  h.file_size = file_size;
  h.header_bytes = n + 8;
  const std::uint64_t data_size = file_size - n - 8;
  for (auto& [name, entry] : doc.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw bad(path, "__metadata__ is not an object");
      for (auto& [k, v] : entry.items())
        if (!v.is_string()) throw bad(path, "__metadata__ value '" + k + "' is not a string");
      h.metadata = entry;
      continue;
    }
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object()) throw bad(path, where + " is not an object");
    auto dt = entry.find("dtype");
    auto sh = entry.find("shape");
    auto off = entry.find("data_offsets");
    if (dt == entry.end() || !dt->is_string()) throw bad(path, where + " has no dtype");
    if (sh == entry.end() || !sh->is_array()) throw bad(path, where + " has no shape");
    if (off == entry.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      throw bad(path, where + " has no data_offsets [begin, end]");
    Tensor t;
    t.name = name;
    t.dtype = dt->get<std::string>();
    auto bits = safetensors_dtype_bits(t.dtype);
    if (!bits) throw bad(path, where + " has the unknown dtype '" + t.dtype + "'");
    t.elements = 1;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) throw bad(path, where + " has a shape that is not a list of sizes");
      t.shape.push_back(d.get<std::uint64_t>());
      if (mul_overflows(t.elements, t.shape.back(), t.elements)) throw bad(path, where + "'s shape overflows");
    }
    std::uint64_t begin = (*off)[0].get<std::uint64_t>(), end = (*off)[1].get<std::uint64_t>();
    if (begin > end || end > data_size)
      throw bad(path, where + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                          "] outside the " + std::to_string(data_size) + " bytes of data");
    std::uint64_t total_bits = 0;
    if (mul_overflows(t.elements, *bits, total_bits) || total_bits % 8 != 0 || total_bits / 8 != end - begin)
      throw bad(path, where + " is " + std::to_string(end - begin) + " bytes, but " + std::to_string(t.elements) +
                          " elements of " + t.dtype + " need " +
                          (total_bits % 8 ? "a whole number of bytes" : std::to_string(total_bits / 8)));
    t.bytes = end - begin;
    t.offset = n + 8 + begin;
    h.tensors.push_back(std::move(t));
  }
  if (auto o = first_overlap(h.tensors))
    throw bad(path, "tensors '" + o->first->name + "' and '" + o->second->name + "' overlap");
  return h;
}

}  // namespace provkit::checkpoint
