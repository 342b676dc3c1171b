#pragma once
// A model's memory facts, engine-neutral: per layer whether it keeps a KV
// cache (full or sliding-window attention), a recurrent state, or nothing in
// the main context, and the widths each needs. Read from GGUF metadata here
// (from_gguf); a vLLM config.json reader fills the same struct.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "provkit/checkpoint/header.hpp"

namespace provkit::fit {

enum class LayerKind {
  attention,  // a K (and, unless MLA, a V) cache row per cell
  recurrent,  // R and S states per sequence (Mamba, gated delta net)
  none,       // nothing in the main context: nextn/MTP layers, layers sharing another's KV
};

struct Layer {
  LayerKind kind = LayerKind::attention;
  bool sliding = false;         // a sliding-window layer (its own, smaller cache)
  std::uint32_t n_head_kv = 0;  // KV heads (1 for MLA's latent)
  std::uint32_t head_k = 0;     // K elements per head (MLA: kv_lora_rank + rope dim)
  std::uint32_t head_v = 0;     // V elements per head (MLA: 0, no V cache)
  std::uint64_t k_width() const { return std::uint64_t{n_head_kv} * head_k; }
  std::uint64_t v_width() const { return std::uint64_t{n_head_kv} * head_v; }
};

// A recurrent layer's state as vLLM shapes it (vllm/model_executor/layers/mamba/mamba_utils.py,
// MambaStateShapeCalculator): a gated delta net's (Qwen3-Next, Qwen3.5: conv state of
// (k_dim * k_heads * 2 + v_dim * v_heads) channels, temporal state v_heads x v_dim x k_dim) or Mamba2's
// (Nemotron-H, Granite 4.0-H: conv state of intermediate + 2 * groups * state channels, temporal state
// heads x head_dim x state). Both keep conv_kernel - 1 steps of the conv input.
enum class StateKind { none, gated_delta_net, mamba2 };
struct StateFacts {
  StateKind kind = StateKind::none;
  std::uint64_t conv_kernel = 0;
  std::uint64_t k_heads = 0, v_heads = 0, k_dim = 0, v_dim = 0;                    // gated delta net
  std::uint64_t intermediate = 0, groups = 0, heads = 0, head_dim = 0, state = 0;  // Mamba2
  std::string ssm_dtype = "auto";  // config.json's mamba_ssm_dtype (Qwen3.5), else "auto"
};

struct ModelFacts {
  std::string architecture;
  std::uint32_t context_length = 0;  // the training context (llama.cpp's -c 0)
  std::uint32_t sliding_window = 0;  // cells of a sliding window (0: none)
  bool mla = false;                  // K only (the compressed latent): K and V types must be equal
  // F32 elements per sequence of each recurrent layer's R (conv) and S (ssm) states (llama-hparams.cpp n_embd_r/s).
  std::uint64_t recurrent_r = 0, recurrent_s = 0;
  std::vector<Layer> layers;
  // config.json's facts beside (from_hf_config): the dtype a KV cache of "auto" takes (vLLM), the
  // widths the activation estimate reads.
  std::string model_type;
  std::uint32_t dtype_bytes = 2;
  std::uint32_t heads = 0;  // attention heads (TP must divide them)
  std::uint64_t hidden = 0, intermediate = 0, vocab = 0;
  StateFacts state;  // the recurrent layers' state (from_hf_config; kind none without recurrent layers)
};

// The facts of a GGUF's metadata (the JSON checkpoint::parse_gguf keeps,
// arrays as arrays). llama.cpp's rules: head_count_kv and the key/value
// lengths scalar or per layer; sliding_window_pattern (int N: layer i slides
// when i % N < N - 1; or a bool per layer), else the architecture's default;
// recurrent layers by architecture (mamba, mamba2 all), full_attention_interval
// (qwen3next: i + 1 not a multiple), or a per-layer head_count_kv of 0 beside
// ssm.* keys (jamba, granitehybrid, nemotron_h); the last
// nextn_predict_layers and shared_kv_layers keep no cache. Throws
// Error(invalid_input) naming `path` when a fact it needs is missing or
// impossible, or the architecture slides by a rule it does not know.
ModelFacts from_gguf(const nlohmann::json& metadata, const std::string& path);

// The facts of a Hugging Face config.json as vLLM reads them (vLLM 002f10e0: vllm/config/model.py, the
// model files' attention layers): `text_config` nested (multimodal wrappers) read in place of the top;
// num_key_value_heads (default num_attention_heads), head_dim (default hidden_size / num_attention_heads);
// MLA where kv_lora_rank is set (DeepSeek V2/V3, Kimi K2: one latent of kv_lora_rank + qk_rope_head_dim,
// no V); sliding layers from `layer_types` ("sliding_attention"), else Gemma 2's even layers, Gemma 3's and
// Cohere 2's all but every sliding_window_pattern-th (default 6, 4), else every layer when sliding_window
// is set and use_sliding_window is not false (Mistral v0.1). context_length is vLLM's derived maximum:
// max_position_embeddings (yarn: original_max_position_embeddings) times rope_scaling's factor, except
// the types that keep it (su, longrope, llama3, mrope, default). Recurrent layers: Qwen3-Next / Qwen3.5
// (gated delta net; `layer_types` "linear_attention", else every layer but each full_attention_interval-th,
// default 4; linear_* keys), Nemotron-H (Mamba2; hybrid_override_pattern: M a Mamba2 layer, * attention,
// others no cache; mamba_num_heads, mamba_head_dim, n_groups, ssm_state_size, conv_kernel) and Granite 4.0-H
// (granitemoehybrid, Mamba2; layer_types "mamba"/"attention"; mamba_n_heads, mamba_d_head, mamba_n_groups,
// mamba_d_state, mamba_d_conv, intermediate mamba_expand * hidden_size). Throws Error(invalid_input) naming
// `path` for a missing or impossible fact, Error(usage) naming why for a family whose state this planner
// does not size (Jamba's Mamba1, Falcon-H1's parallel heads, pure Mamba, Kimi Linear, MiniMax, LFM2).
ModelFacts from_hf_config(const nlohmann::json& config, const std::string& path);

// The weights by layer (blk.N.*), the output layer (output*, which llama.cpp
// places as layer n_layer) and the input (token_embd*, kept on the host).
struct Weights {
  std::vector<std::uint64_t> layer_bytes;
  std::uint64_t output_bytes = 0, input_bytes = 0;
  std::uint64_t total() const;
};
// The tensors of a model's GGUF files (a gguf-split set's parts together), by
// the layer each belongs to; `layers` from the model's facts. Tensors of
// other names (rope factors, ...) count with the output layer.
Weights weights_of(const std::vector<checkpoint::FileHeader>& files, std::size_t layers);

}  // namespace provkit::fit
