#pragma once
// The GGUF header (ggml's docs/gguf.md), versions 2 and 3, in either byte
// order (GGUFReader's rule: a version with zero low 16 bits is byte-swapped):
// magic "GGUF", u32 version, u64 tensor count, u64 key/value count, the
// key/values (u64-length strings, u32 type, value; arrays: u32 type, u64
// count, items), then per tensor: name, u32 dims, u64 each, u32 ggml type,
// u64 offset into the data, which starts at the next multiple of
// general.alignment (default 32). Counts, string lengths and dims are bounded;
// each tensor's bytes come from its ggml type's block size and block bytes
// (ggml.c's type_traits) and must lie inside the file without overlapping.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "provkit/checkpoint/header.hpp"

namespace provkit::checkpoint {

struct GgmlType {
  std::string_view name;         // "Q4_K"
  std::uint32_t block_size = 1;  // elements per block
  std::uint32_t block_bytes = 0;
};
// nullopt for ids ggml does not define (or has retired, e.g. 4, 5, 31-33, 36-38).
std::optional<GgmlType> ggml_type(std::uint32_t id);

// general.file_type: llama.cpp's llama_ftype ("Q4_K_M" = 15) and the ggml
// type most of its weights are stored in (Q4_K, blocks of 256).
struct GgufFileType {
  std::string_view name;         // "Q4_K_M"
  std::string_view weight_type;  // "Q4_K"
  std::uint32_t block_size = 1;  // elements per block of weight_type
};
// nullopt for ids llama.cpp does not define (or has retired, e.g. 5, 6, 33-35).
std::optional<GgufFileType> gguf_file_type(std::uint32_t id);

inline constexpr std::uint64_t kMaxGgufTensors = 1u << 20;
inline constexpr std::uint64_t kMaxGgufKeys = 1u << 20;
inline constexpr std::uint64_t kMaxGgufString = 64u << 20;
inline constexpr std::uint64_t kMaxGgufArray = 64u << 20;
// Arrays of numbers or bools up to this many items are kept as JSON arrays in
// the metadata (per-layer facts); longer ones, and arrays of strings (a
// tokenizer's vocabulary), as "[N TYPE]".
inline constexpr std::uint64_t kMaxGgufArrayShown = 4096;

// `have` holds the first bytes of the file (any number). Pure.
ParseResult parse_gguf(std::string_view have, std::uint64_t file_size, const std::string& path);

}  // namespace provkit::checkpoint
