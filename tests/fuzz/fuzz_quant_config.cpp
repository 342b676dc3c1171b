// libFuzzer target: the config.json readers (provkit::checkpoint::make_report's sidecars: config.json's
// quantization_config, hf_quant_config.json, through util::parse_untrusted; check_quantization's schemes,
// compressed-tensors' "re:" patterns through util::Regex). The input is config.json, then (after a NUL)
// hf_quant_config.json, then (after a second NUL) tensor names, one a line, each a module's weight and its
// scale. Any input is reported on or refused with provkit::Error(usage) naming the file; nothing else.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "provkit/checkpoint/report.hpp"
#include "provkit/error.hpp"

using namespace provkit::checkpoint;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto first = input.find('\0');
  const auto second = first == std::string::npos ? first : input.find('\0', first + 1);
  const std::string config = input.substr(0, first);
  Sidecars sidecars{{"config.json", config}};
  if (first != std::string::npos)
    sidecars["hf_quant_config.json"] = input.substr(first + 1,
                                                    second == std::string::npos ? second : second - first - 1);
  FileHeader h;
  h.path = "model.safetensors";
  h.format = Format::safetensors;
  std::string names = second == std::string::npos ? "model.layers.0.mlp.down_proj\nmodel.layers.0.mlp.gate\nlm_head"
                                                  : input.substr(second + 1);
  std::uint64_t offset = 8;
  for (std::size_t at = 0; at <= names.size();) {
    auto end = names.find('\n', at);
    if (end == std::string::npos) end = names.size();
    const std::string module = names.substr(at, end - at);
    at = end + 1;
    if (module.empty()) continue;
    h.tensors.push_back({module + ".weight", h.tensors.size() % 2 ? "BF16" : "F8_E4M3", {16, 16}, 256, 256, offset});
    offset += 256;
    h.tensors.push_back({module + ".weight_scale", "BF16", {16, 1}, 16, 32, offset});
    offset += 32;
  }
  h.file_size = offset;
  h.header_bytes = 8;
  try {
    auto report = make_report({h}, sidecars, std::nullopt);
    (void)dump(report.to_json());
  } catch (const provkit::Error& e) {
    const std::string what = e.what();
    if (e.code() != provkit::ExitCode::usage ||
        (what.rfind("config.json: ", 0) != 0 && what.rfind("hf_quant_config.json: ", 0) != 0))
      std::abort();
  }
  return 0;
}
