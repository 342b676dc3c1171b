// libFuzzer target: a safetensors file's header (provkit::checkpoint::parse_safetensors,
// read_header) and the quantization check over its tensors. Any input parses or is
// refused with provkit::Error(usage) naming the file; what parses lies inside the
// file, each tensor's bytes matching its dtype and shape, none overlapping.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "provkit/checkpoint/report.hpp"
#include "provkit/checkpoint/safetensors.hpp"
#include "provkit/error.hpp"

using namespace provkit::checkpoint;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  try {
    std::uint64_t got = 0;
    FileHeader h = read_header("f.safetensors", Format::safetensors, file.size(),
                               [&](std::uint64_t at, std::uint64_t n) {
                                 if (at + n > file.size()) std::abort();  // never past the file
                                 return file.substr(at, n);
                               }, &got);
    if (h.header_bytes > file.size() || got != h.header_bytes) std::abort();
    std::uint64_t end = 0;
    for (const auto& t : h.tensors) {
      if (t.offset < h.header_bytes || t.offset + t.bytes > file.size()) std::abort();
      auto bits = safetensors_dtype_bits(t.dtype);
      if (!bits || t.elements * *bits / 8 != t.bytes) std::abort();
      end = std::max(end, t.offset + t.bytes);
    }
    std::vector<FileHeader> files{h};
    auto report = make_report(files, {{"config.json", R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})"}},
                              FitRequest{2, 1u << 30, 2});
    (void)dump(report.to_json());
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();
  }
  return 0;
}
