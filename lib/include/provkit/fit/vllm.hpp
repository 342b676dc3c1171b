#pragma once
// vLLM's KV cache sizing, transcribed from its source (vLLM commit 001cabc1:
// vllm/v1/kv_cache_interface.py for the page of each layer spec,
// vllm/v1/core/kv_cache_utils.py for grouping, blocks, the per-rank minimum
// and the two log lines, MambaSpec's page and its blocks a request by
// mamba_cache_mode; vllm/distributed/utils.py get_pp_indices for the
// pipeline stages), into the same Plan the llama.cpp rules fill. Hybrids:
// the state shapes and dtypes from vllm/model_executor/layers/mamba/
// mamba_utils.py (commit 02d71083), the attention block raised to hold a state
// from HybridAttentionMambaModelConfig in vllm/model_executor/models/config.py
// (commits 0144dd5b and 1936cf38 agree with prefix caching off; later
// releases' _align_hybrid_block_size keeps that rule for modes none and align),
// the mode by MambaModelConfig (prefix caching: align, or all where the model
// supports it), judged by the v0.11-era log of vllm-project/vllm#26646 and the
// v0.24.0 logs of noonghunna/club-3090#612 and #652 (mode align).
#include <cstdint>
#include <vector>

#include "provkit/checkpoint/header.hpp"
#include "provkit/fit/plan.hpp"

namespace provkit::fit {

// The checkpoint's weights as vLLM places them: a decoder layer's tensors on its pipeline stage, the
// others (embeddings, vision towers) on the first, lm_head and the final norm on the last; tensors of two
// or more dimensions split over the tensor-parallel ranks, the rest (norms, biases, MoE routers) whole on
// each (checkpoint::fit's rule). Layers past the model's (DeepSeek's MTP layer) are not loaded.
struct PlacedWeights {
  std::vector<std::uint64_t> layer_split, layer_whole;  // per decoder layer
  std::uint64_t first_split = 0, first_whole = 0, last_split = 0, last_whole = 0;
};
PlacedWeights place_weights(const std::vector<checkpoint::FileHeader>& files, std::size_t layers);

// The first and one-past-last layer of pipeline stage `rank` of `size` (get_pp_indices: the remainder
// goes to the stages before the last, from the back).
std::pair<std::size_t, std::size_t> pp_layers(std::size_t layers, std::uint32_t rank, std::uint32_t size);

// An estimate of what vLLM's profiling run holds beside the weights on one rank (activations of
// max_num_batched_tokens tokens and non-torch memory). vLLM measures this; the planner cannot. The
// estimate: tokens * (3 * intermediate / tp + 3 * hidden) * dtype bytes + 512 MiB, fitted to the two
// profiles printed in vllm-project/vllm#10517 (Llama-3.1-8B, RTX 3090, v0: activation 2.07 and 2.99 GiB
// at 20000 and 29000 tokens, non-torch 0.35 GiB); CUDA graphs (vLLM v1 profiles them too) are not in it.
std::uint64_t activation_estimate(const ModelFacts& model, std::uint64_t tokens, std::uint32_t tp);

// vLLM's plan: each rank's page per layer (FullAttentionSpec 2 * block * kv_heads * head * dtype, with
// kv_heads = max(1, heads / tp); SlidingWindowSpec the same page; MLAAttentionSpec block * (kv_lora_rank +
// rope) * dtype, fp8_ds_mla 656 bytes a token, not split by TP), the groups of a hybrid model (uniform
// page; layers[i::n] per group, padding layers), the memory one max_model_len request needs, and with
// memory to divide (--kv-cache-memory-bytes, or the cards named: total * gpu_memory_utilization -
// weights - activation_estimate, each rank's card rank r) the blocks (available // page // group_size,
// the minimum over ranks), "GPU KV cache size" and "Maximum concurrency". A max_model_len that does
// not fit is does_not_fit with vLLM's own sentence and its estimated maximum model length. Throws
// Error(FitRefusal::engine_refuses) for what vLLM refuses to configure: fp8_ds_mla on a model without
// MLA, a max_model_len past the model's derived maximum, TP that does not divide the attention heads or
// a recurrent state's sharded dimension; Error(usage) for more ranks than cards named, a cache dtype not
// planned (nvfp4, turboquant), or on a hybrid: mamba cache mode all, speculative decoding, MLA or
// per-token-head scales. A hybrid's recurrent layers (MambaSpec) each hold one state page a request (two in
// mode align, which --enable-prefix-caching sets for gated delta nets), the
// attention block raised to 16 * cdiv(state, 16 * one token's attention page) unless --block-size is larger,
// the state padded to that page.
// `profiled`: the KV memory each rank had (vLLM's "Available KV cache memory" line, per rank), when known:
// it replaces the estimate and --kv-cache-memory-bytes, so vLLM's own figure can be fed back.
Plan plan_vllm(const ModelFacts& model, const EngineSettings& engine, const PlacedWeights& weights,
               const std::vector<GpuFacts>& gpus, const std::vector<std::uint64_t>& profiled = {});

}  // namespace provkit::fit
