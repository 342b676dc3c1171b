#pragma once
// safetensors and GGUF files built in memory for the checkpoint tests.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace checkpoint_test {

inline std::string le(std::uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file from its header JSON and `data_bytes` bytes of data.
inline std::string safetensors_file(const nlohmann::json& header, std::uint64_t data_bytes) {
  std::string text = header.dump();
  return le(text.size(), 8) + text + std::string(data_bytes, '\x5a');
}

struct StTensor {
  std::string name, dtype;
  std::vector<std::uint64_t> shape;
};
// Tensors laid out one after the other, sizes from their dtype.
inline std::string safetensors_of(const std::vector<StTensor>& tensors) {
  auto bits = [](const std::string& d) { return d == "BF16" || d == "F16" ? 16 : d == "F32" || d == "I32" ? 32 : 8; };
  nlohmann::json h = nlohmann::json::object();
  std::uint64_t off = 0;
  for (const auto& t : tensors) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n *= d;
    n = n * bits(t.dtype) / 8;
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + n}}};
    off += n;
  }
  return safetensors_file(h, off);
}

inline std::string gguf_str(const std::string& s) { return le(s.size(), 8) + s; }

struct GgufTensor {
  std::string name;
  std::uint32_t type;
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes;
};
// A GGUF v3 file: `kv` already encoded (key, type, value), the tensors packed at 32-byte alignment.
inline std::string gguf_file(const std::vector<std::string>& kv, const std::vector<GgufTensor>& tensors,
                             std::uint32_t version = 3, std::uint64_t alignment = 32) {
  std::string out = "GGUF" + le(version, 4) + le(tensors.size(), 8) + le(kv.size(), 8);
  for (const auto& k : kv) out += k;
  std::uint64_t off = 0;
  for (const auto& t : tensors) {
    out += gguf_str(t.name) + le(t.shape.size(), 4);
    for (auto d : t.shape) out += le(d, 8);
    out += le(t.type, 4) + le(off, 8);
    off += (t.bytes + alignment - 1) / alignment * alignment;
  }
  out += std::string((alignment - out.size() % alignment) % alignment, '\0');
  return out + std::string(off, '\x11');
}
inline std::string kv_string(const std::string& key, const std::string& value) {
  return gguf_str(key) + le(8, 4) + gguf_str(value);
}
inline std::string kv_u32(const std::string& key, std::uint32_t v) { return gguf_str(key) + le(4, 4) + le(v, 4); }

}  // namespace checkpoint_test
