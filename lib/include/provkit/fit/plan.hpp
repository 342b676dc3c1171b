#pragma once
// Where each byte goes: KV cache and recurrent state per layer exactly as
// llama.cpp allocates them, each layer's device by -ngl/-ts, the weights
// beside them, and the largest context and most slots the GPUs hold.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "provkit/fit/engine.hpp"
#include "provkit/fit/model.hpp"

namespace provkit::fit {

// Where a card's facts came from: sizes named for another box (--gpu-memory), or this box's driver.
enum class GpuSource { named, local };
std::string_view source_name(GpuSource s);  // "gpu_memory", "local"

// One card: its total memory and what is free on it now (named sizes: both the same). A local card
// another process half-fills has half free, and the plan counts the half.
struct GpuFacts {
  std::uint64_t total = 0, free = 0;
  GpuSource source = GpuSource::named;
  std::string name;  // the driver's name of a local card ("NVIDIA GeForce RTX 3090"); "" for a named size
};
// "24G,24G" or "97887MiB,24576MiB": one card each (util::parse_size). Throws Error(usage).
std::vector<GpuFacts> parse_gpu_memory(const std::string& list);

struct LayerPlan {
  std::uint32_t index = 0;
  LayerKind kind = LayerKind::attention;
  bool sliding = false;
  std::int32_t device = -1;  // GPU index, -1: the host
  std::uint64_t cells = 0;   // KV cells over all streams
  std::uint64_t k_bytes = 0, v_bytes = 0, r_bytes = 0, s_bytes = 0, weights_bytes = 0;
};

struct GpuRow {
  std::uint32_t index = 0;  // the engine's order (CUDA_VISIBLE_DEVICES applied), as -ts counts
  std::uint64_t total = 0, free = 0;
  GpuSource source = GpuSource::named;
  std::string name;
  std::uint64_t layers = 0, weights_bytes = 0, kv_bytes = 0, recurrent_bytes = 0;
  std::int64_t left = 0;  // free - (weights + kv + recurrent); negative: short by that much
};

// vLLM's own figures (Engine::vllm), as vllm/v1/core/kv_cache_utils.py computes and logs them.
struct VllmFigures {
  std::uint64_t max_model_len = 0;
  std::uint32_t block_size = 16;  // tokens a page holds (after hybrid page unification: the smallest group's)
  std::uint32_t tensor_parallel = 1, pipeline_parallel = 1;
  std::string kv_cache_dtype;
  std::uint64_t page_bytes = 0;              // one layer's page on one rank
  std::uint32_t groups = 0, group_size = 0;  // KV cache groups and layers per group (padding layers counted)
  std::uint64_t request_bytes = 0;           // one max_model_len request's KV on the rank that needs most
  // A hybrid's recurrent layer: its state per sequence on one rank (MambaSpec's page before it is padded to
  // the attention page), and the conv state's part of it. 0 without recurrent layers.
  std::uint64_t state_bytes = 0, state_conv_bytes = 0;
  std::string mamba_cache_mode;         // a hybrid's state mode in effect: none, align
  std::vector<std::int64_t> available;  // KV memory per rank: given (--kv-cache-memory-bytes) or estimated
  bool available_estimated = false;
  std::uint64_t max_num_batched_tokens = 0, max_num_seqs = 0;  // as given, or vLLM's defaults for the cards
  std::uint64_t activation_estimate = 0;                       // per rank, inside the estimate
  std::optional<std::uint64_t> num_blocks, kv_tokens;          // "GPU KV cache size: N tokens" (with available memory)
  std::optional<double> max_concurrency;                       // "Maximum concurrency for L tokens per request: X"
  // The most sequences of any length running at once: each holds at least one block in every group (a hybrid's
  // state groups exactly one), so blocks // groups. A --max-num-seqs above it never runs whole; the planner's
  // figure, vLLM prints none.
  std::optional<std::uint64_t> max_sequences;
  std::optional<std::uint64_t> estimated_max_model_len;  // vLLM's binary search, when the line does not fit
  std::string refusal;                                   // vLLM's own sentence when it would refuse to start
};

struct Plan {
  Engine engine = Engine::llama_server;
  std::uint32_t context = 0;    // n_ctx in effect (padded to 256)
  std::uint32_t sequences = 1;  // slots
  bool unified = false, flash_attn = true;
  std::uint32_t ubatch = 512;
  std::uint64_t cells = 0, swa_cells = 0;  // per stream, full and sliding-window layers
  std::vector<LayerPlan> layers;
  std::uint64_t kv_bytes = 0, recurrent_bytes = 0, weights_bytes = 0, host_bytes = 0;
  std::vector<double> tensor_split;  // each card's share of the offloaded layers
  std::vector<GpuRow> gpus;
  bool fits = true;  // every card keeps left >= 0 (no GPUs: true)
  // With GPUs named: the largest -c (a multiple of 256, up to the training context or -c, the larger)
  // that fits at these slots, and the most -np that fit keeping each slot's context (up to 256).
  std::optional<std::uint32_t> max_context, max_slots;
  std::optional<VllmFigures> vllm;
  nlohmann::json to_json() const;
};

// llama.cpp's rules (llama-context.cpp, llama-kv-cache.cpp, llama-kv-cache-iswa.cpp,
// llama-memory-recurrent.cpp, llama-model.cpp's layer split). Throws
// Error(FitRefusal::engine_refuses) with llama.cpp's reason for what it
// refuses at context creation: a quantized V cache without flash attention,
// MLA with K and V of different types, a cache type whose block does not
// divide a head. Compute buffers and the runtime's own memory are not counted.
Plan plan(const ModelFacts& model, const EngineSettings& engine, const Weights& weights,
          const std::vector<GpuFacts>& gpus);

// The plan of the model a checkpoint's headers hold, by the engine the line names: vLLM from config.json
// (`config`, null when none was read) and the safetensors weights (plan_vllm); llama.cpp from the GGUF
// model file, the one with an architecture other than a projector's ("clip"), and the gguf-split parts
// beside it that carry split.* alone (plan). Throws Error(usage) when the files hold no model that engine
// reads, and what plan and plan_vllm throw.
Plan plan_checkpoint(const std::vector<checkpoint::FileHeader>& files, const nlohmann::json& config,
                     const EngineSettings& engine, const std::vector<GpuFacts>& gpus);

}  // namespace provkit::fit
