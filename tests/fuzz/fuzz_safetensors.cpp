// libFuzzer target: a safetensors file's header (provkit::checkpoint::parse_safetensors,
// read_header; the header read as SAX events, checked against a JSON object read whole)
// and the quantization check over its tensors. Any input parses or is
// refused with provkit::Error(usage) naming the file; what parses lies inside the
// file, each tensor's bytes matching its dtype and shape, none overlapping.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "checkpoint/safetensors.hpp"
#include "provkit/checkpoint/report.hpp"
#include "provkit/error.hpp"

using namespace provkit::checkpoint;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  try {
    std::uint64_t got = 0;
    FileHeader h = read_header(
        "f.safetensors", Format::safetensors, file.size(),
        [&](std::uint64_t at, std::uint64_t n) {
          if (at + n > file.size()) std::abort();  // never past the file
          return file.substr(at, n);
        },
        &got);
    if (h.header_bytes > file.size() || got != h.header_bytes) std::abort();
    // The event reader (no DOM) accepts only what a JSON object read whole also is, with the same tensors,
    // in name order, each once.
    auto doc = nlohmann::json::parse(file.substr(8, h.header_bytes - 8), nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || doc.size() - doc.count("__metadata__") != h.tensors.size())
      std::abort();
    for (std::size_t i = 0; i < h.tensors.size(); ++i)
      if ((i > 0 && !(h.tensors[i - 1].name < h.tensors[i].name)) || !doc.contains(h.tensors[i].name)) std::abort();
    std::uint64_t end = 0;
    for (const auto& t : h.tensors) {
      if (t.offset < h.header_bytes || t.offset + t.bytes > file.size()) std::abort();
      auto bits = safetensors_dtype_bits(t.dtype);
      if (!bits || t.elements * *bits / 8 != t.bytes) std::abort();
      end = std::max(end, t.offset + t.bytes);
    }
    std::vector<FileHeader> files{h};
    auto report = make_report(
        files,
        {{"config.json", R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})"}},
        FitRequest{2, 1u << 30, 2});
    (void)dump(report.to_json());
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();
  }
  return 0;
}
