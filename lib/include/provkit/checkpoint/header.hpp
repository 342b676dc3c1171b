#pragma once
// What a checkpoint file's header says (safetensors or GGUF), and the one
// loop that reads a header through any byte source: the parsers take the
// bytes read so far and either return the header or say how many bytes of
// the file they need first, so a remote reader fetches one more range.
// Errors are provkit::Error(usage) naming the file: the input is bad.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "provkit/error.hpp"

namespace provkit::checkpoint {

enum class Format { safetensors, gguf };
std::string format_name(Format f);

// Why a checkpoint's header was refused (Error::is): every one exit 2, `invalid_input` in --json.
enum class HeaderRefusal {
  truncated,            // the file ends before its header, a value in it or the tensor data
  too_large,            // a length, count or depth over the reader's limits (refused before it is allocated)
  not_this_format,      // no GGUF magic; a safetensors header that is not a JSON object
  unsupported_version,  // a GGUF version this reader does not know
  malformed,            // a value of the wrong kind (metadata, a shape, a value type, the alignment)
  missing_field,        // a tensor without dtype, shape or data_offsets
  unknown_dtype,        // a dtype or ggml type this reader does not know
  outside_data,         // a tensor's bytes outside the file's data
  size_mismatch,        // a tensor's bytes are not what its dtype and shape need (whole blocks, whole bytes)
  misaligned,           // a GGUF tensor not at the file's alignment
  overlap,              // two tensors that share a byte
  not_contiguous,       // safetensors: a gap, data not starting at 0, or bytes after the last tensor
};
std::string_view reason_name(HeaderRefusal r);
ExitCode exit_code(HeaderRefusal r);

struct Tensor {
  std::string name;
  std::string dtype;                 // "BF16", "F8_E4M3" (safetensors); "Q4_K", "F16" (ggml names)
  std::vector<std::uint64_t> shape;  // as stored (GGUF: ggml order, ne[0] first)
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;  // of its data, from the start of the file
};

// The first two tensors that share a byte (empty tensors take none), if any.
std::optional<std::pair<const Tensor*, const Tensor*>> first_overlap(const std::vector<Tensor>& tensors);

struct FileHeader {
  std::string path;
  Format format = Format::safetensors;
  std::uint64_t file_size = 0;
  std::uint64_t header_bytes = 0;  // the header's length in the file (prefix included)
  std::vector<Tensor> tensors;
  // safetensors: "__metadata__" (string -> string); GGUF: every scalar key
  // (strings cut at 256 bytes) and, for arrays, "[N TYPE]".
  nlohmann::json metadata = nlohmann::json::object();
  std::uint32_t gguf_version = 0;
  bool gguf_big_endian = false;  // written for a big-endian host (GGUFWriter's endianess=BIG)
};

// "I need the first `bytes` bytes of the file" (never more than its size).
struct NeedBytes {
  std::uint64_t bytes = 0;
};
using ParseResult = std::variant<FileHeader, NeedBytes>;

// Bounds on what a header may ask for: larger is refused, never allocated.
inline constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;  // the safetensors format's own cap
inline constexpr std::uint64_t kMaxGgufHeader = 512ull << 20;        // vocabularies of 256k tokens fit

// Reads `size` bytes at `offset` (the caller never asks past the file's end).
using ReadAt = std::function<std::string(std::uint64_t offset, std::uint64_t size)>;

// The format a path's name says (".safetensors", ".gguf"), if any.
bool is_checkpoint_name(std::string_view path, Format* format = nullptr);
// A gguf-split part's name, as llama.cpp's llama_split_path writes it: NAME-00001-of-00003.gguf.
bool is_gguf_split_name(std::string_view path);

// The header of `path` (`file_size` bytes), read with `read`: safetensors in
// two reads (the length, then exactly the header), GGUF with a first read of
// `first_read` bytes and more as the parser needs them (at least doubling). `read_bytes`, when
// given, adds the bytes read.
FileHeader read_header(const std::string& path, Format format, std::uint64_t file_size, const ReadAt& read,
                       std::uint64_t* read_bytes = nullptr, std::uint64_t first_read = 16 << 10);

// ---- On disk: what inspect of paths and envcheck --engine-args read alike ----
// [at, at + n) of a file; Error(usage) naming it when it cannot be read.
std::string read_local(const std::filesystem::path& file, std::uint64_t at, std::uint64_t n);
// A file of a checkpoint on disk: its path in the checkpoint, its size, where it lies.
struct LocalFile {
  std::string path;
  std::uint64_t size = 0;
  std::filesystem::path where;
};
// A path on disk: a directory (a snapshot, a plain tree, or an hf cache's repository folder
// "models--org--name", whose refs/main or only snapshot is read) walked, paths relative to it, links to
// blobs followed, .cache left out; or a single file, its path as given (config.json and
// hf_quant_config.json known by name wherever they are). Error(usage) for a path that is none of these.
std::vector<LocalFile> list_local(const std::filesystem::path& path);
// The header of a file on disk (read_header through read_local).
FileHeader read_local_header(const LocalFile& file, Format format);

}  // namespace provkit::checkpoint
