#pragma once
// Whether the tensors stored agree with the quantization scheme the
// checkpoint declares: config.json's "quantization_config" and ModelOpt's
// hf_quant_config.json. Understood (docs/hf-fetch.md, "inspect"):
// - quant_method "fp8" (transformers FineGrainedFP8 / DeepSeek style): F8_E4M3
//   weights with weight_scale_inv, of shape ceil(rows/b0) x ceil(cols/b1) when
//   weight_block_size [b0, b1] is given; exclusions modules_to_not_convert,
//   ignored_layers;
// - "compressed-tensors": config_groups (targets "Linear" or "re:" patterns)
//   in the formats float-quantized, naive-quantized, int-quantized,
//   pack-quantized, nvfp4-pack-quantized, mxfp4-pack-quantized; exclusions ignore;
// - ModelOpt (hf_quant_config.json, or quant_method "modelopt"): quant_algo
//   FP8 (F8_E4M3 + weight_scale) and NVFP4 (U8 + F8_E4M3 weight_scale +
//   weight_scale_2); exclusions exclude_modules (fnmatch patterns) or ignore;
// - "bitsandbytes": 4-bit (U8 + quant_state) and 8-bit (I8 + SCB);
//   exclusions llm_int8_skip_modules, modules_to_not_convert;
// - "gptq" and "awq": I32 qweight + scales in the decoder blocks;
//   exclusions modules_to_not_convert.
// A linear module is one with a 2-D weight (or a packed/quantized one) that
// is no embedding or norm; lm_head and MoE routers ("gate", "router") are
// not expected to be quantized unless a pattern names them.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "provkit/checkpoint/header.hpp"

namespace provkit::checkpoint {

struct Finding {
  std::string tensor;
  std::string dtype;     // as stored ("" when the tensor is missing)
  std::string expected;  // what the scheme wants there
  std::string why;
};

struct SchemeCheck {
  std::string scheme = "none";  // "fp8 (weight_block_size [128, 128])", "modelopt NVFP4", ...
  std::string source;           // "config.json", "hf_quant_config.json", a GGUF file; empty: none declared
  // The scheme as fields beside the display string: method "fp8", "compressed-tensors", "modelopt",
  // "bitsandbytes", "gptq", "awq", "gguf" (empty: none); format "e4m3", "float-quantized", "NVFP4", "4-bit",
  // "Q4_K_M"...; block_size the elements sharing one scale ([128, 128] for fp8 blocks, [256] for a K-quant,
  // [group_size] for gptq/awq; empty: per tensor or channel, or not stated); weight_type the ggml type most
  // weights are stored in (GGUF only).
  std::string method, format, weight_type;
  std::vector<std::uint64_t> block_size;
  bool checked = false;  // false: no scheme, or one this reader does not know
  std::size_t linear_modules = 0;
  std::size_t quantized_modules = 0;
  std::vector<Finding> findings;
};

// `config` and `hf_quant_config` are the parsed files (null when absent);
// `tensors` are every safetensors tensor of the checkpoint. Throws
// Error(usage) for a scheme the config states malformed (naming `config_name`).
SchemeCheck check_quantization(const nlohmann::json& config, const nlohmann::json& hf_quant_config,
                               const std::vector<const Tensor*>& tensors,
                               const std::string& config_name = "config.json");

// Modules whose weights tensor parallelism keeps whole on every GPU (MoE routers).
bool is_router_module(const std::string& module);
// "model.layers.0.mlp.down_proj.weight" -> "model.layers.0.mlp.down_proj"
// (bitsandbytes' "X.weight.absmax" -> "X").
std::string module_of(const std::string& tensor);

}  // namespace provkit::checkpoint
