#pragma once
// The engine's own command line, as the operator keeps it in a unit file,
// read for what matters to memory. One struct for every engine: llama.cpp's
// tools fill the llama.cpp fields, `vllm serve` its own (EngineSettings::vllm).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "provkit/error.hpp"

namespace provkit::fit {

enum class Engine { llama_server, llama_cli, llama_completion, vllm };
std::string_view engine_name(Engine e);

// A KV cache type llama.cpp's -ctk/-ctv accept (common/arg.cpp), with ggml's block size and bytes.
struct CacheType {
  std::string name;  // "f16", "q8_0"
  std::uint32_t block_size = 1, block_bytes = 2;
  bool quantized() const { return block_size > 1; }
  // ggml_row_size: bytes of `n` elements (n a multiple of the block).
  std::uint64_t row_bytes(std::uint64_t n) const { return n / block_size * block_bytes; }
};
// nullopt for a name llama.cpp does not accept.
std::optional<CacheType> cache_type(const std::string& name);

// `vllm serve`'s flags that size its memory (vllm/engine/arg_utils.py, vllm/config/cache.py at vLLM commit
// 002f10e0; the dash and underscore spellings alike, as vLLM's FlexibleArgumentParser takes them).
struct VllmArgs {
  std::optional<std::uint64_t> max_model_len;                // --max-model-len (unset or -1/auto: the model's own)
  bool auto_fit = false;                                     // --max-model-len -1 / auto: vLLM lowers it to what fits
  std::uint32_t tensor_parallel = 1, pipeline_parallel = 1;  // -tp, -pp
  std::string kv_cache_dtype = "auto";                       // --kv-cache-dtype (CacheDType)
  double gpu_memory_utilization = 0.92;                      // CacheConfig's default at 002f10e0 (0.9 before)
  std::optional<std::uint64_t> kv_cache_memory_bytes;        // replaces the profiled figure when given
  std::optional<std::uint32_t> max_num_seqs, max_num_batched_tokens, block_size;
  std::uint32_t num_speculative_tokens = 0;  // --speculative-config's num_speculative_tokens
  std::string speculative_method;            // and its method (draft layers are not planned)
  // Recurrent layers' state (vllm/config/cache.py at 001cabc1): MambaDType auto/float32/float16 for the conv
  // state and the temporal (ssm) state ("auto": the conv state's, which "auto" makes the model's); the
  // MambaCacheMode none/align/all (unset: none, one state block per request).
  std::string mamba_cache_dtype = "auto", mamba_ssm_cache_dtype = "auto", mamba_cache_mode;
  std::optional<bool> prefix_caching;  // --enable-prefix-caching / --no-enable-prefix-caching, when given
};

enum class FlashAttention { on, off, automatic };
enum class SplitMode { none, layer, row };

struct EngineSettings {
  Engine engine = Engine::llama_server;
  std::string model;                      // -m, when given (vllm serve: its MODEL, a path or a Hub repository id)
  std::string hf_repo;                    // llama.cpp's -hf REPO[:TAG], when given
  std::string hf_file;                    // llama.cpp's -hff FILE: the file of hf_repo, when given
  std::string revision;                   // vllm serve --revision, when given
  bool offline = false;                   // llama.cpp's --offline: -hf reads its cache only
  std::uint32_t context = 0;              // -c (0: the model's training context)
  std::optional<std::uint32_t> parallel;  // -np (unset: llama-server runs 4 unified slots)
  std::optional<bool> kv_unified;         // -kvu / --kv-unified, --no-kv-unified
  CacheType type_k = *cache_type("f16"), type_v = *cache_type("f16");
  FlashAttention flash_attn = FlashAttention::automatic;
  std::uint32_t batch = 2048, ubatch = 512;  // -b, -ub
  bool swa_full = false;
  std::optional<std::int64_t> gpu_layers;  // -ngl (unset: all)
  std::vector<double> tensor_split;        // -ts (empty: by each card's free memory)
  SplitMode split_mode = SplitMode::layer;
  std::uint32_t main_gpu = 0;
  bool kv_offload = true;            // -nkvo: the KV cache stays on the host
  std::vector<std::string> ignored;  // flags read past as not about memory
  VllmArgs vllm;                     // Engine::vllm only

  // What the engine runs with once its defaults are applied.
  std::uint32_t sequences() const;
  bool unified() const;
};

// Reasons of this domain: the engine would refuse the command line (exit 2),
// or the plan does not fit the GPUs (exit 1; never a checkpoint's contradiction).
enum class FitRefusal { engine_refuses, does_not_fit };
std::string_view reason_name(FitRefusal r);
ExitCode exit_code(FitRefusal r);

// Splits `line` as a shell would (quotes, backslashes; no expansion) and
// reads it. The first word names the engine (a path to it too). Flags that
// do not matter to memory are skipped with their value. Throws Error(usage)
// for an engine it does not know or a value it cannot read, and
// Error(FitRefusal::engine_refuses) with the engine's own reason for a line
// the engine itself rejects while parsing (an unknown cache type, a flag
// that tool does not take).
EngineSettings parse_engine_args(const std::string& line);

}  // namespace provkit::fit
