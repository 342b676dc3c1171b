#pragma once
// The safetensors header: an 8-byte little-endian length N, then N bytes of
// JSON: {"__metadata__": {str: str}, NAME: {"dtype", "shape", "data_offsets":
// [begin, end]}} with offsets relative to the byte after the header. Checked:
// N <= kMaxSafetensorsHeader and inside the file, every offset inside the
// data, elements * dtype size == end - begin, no two tensors overlapping, and
// safetensors' own rule: sorted by offset, the tensors cover the data from 0
// to the file's end with no gap (refusals name safetensors' error).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "provkit/checkpoint/header.hpp"

namespace provkit::checkpoint {

// Bits per element of a safetensors dtype ("BF16" -> 16, "F4" -> 4); nullopt for unknown names.
std::optional<unsigned> safetensors_dtype_bits(std::string_view dtype);

// `have` holds the first bytes of the file (any number). Pure.
ParseResult parse_safetensors(std::string_view have, std::uint64_t file_size, const std::string& path);

}  // namespace provkit::checkpoint
