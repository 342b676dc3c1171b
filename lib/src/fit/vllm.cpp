#include "provkit/fit/vllm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "provkit/checkpoint/scheme.hpp"

namespace provkit::fit {

namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

Error refuses(const std::string& why) { return Error(FitRefusal::engine_refuses, "vLLM refuses this: " + why); }

std::uint64_t cdiv(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

// Products of hostile sizes (a block of 2^20 tokens, a context of 2^40) held at 2^64 - 1, which no card
// holds: such a plan does not fit rather than wraps into one that does.
std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? UINT64_MAX : out;
}
std::uint64_t plus(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// vllm.utils.mem_utils.format_gib: GiB to two decimals.
std::string gib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return text;
}

// The layer index of a decoder layer's tensor ("model.layers.12.mlp..." and nested
// "model.language_model.layers.12..."), or none.
std::optional<std::size_t> layer_of(const std::string& name) {
  for (std::size_t at = name.find("layers."); at != std::string::npos; at = name.find("layers.", at + 1)) {
    if (at > 0 && name[at - 1] != '.') continue;
    std::size_t i = at + 7, n = 0;
    bool digits = false;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && n < (1u << 20)) {
      n = n * 10 + static_cast<std::size_t>(name[i++] - '0');
      digits = true;
    }
    if (digits && (i == name.size() || name[i] == '.')) return n;
  }
  return std::nullopt;
}

// The cache dtype's bytes per element (CacheDType; "auto": the model's), and its per-token-head scales.
struct CacheFormat {
  std::uint32_t bytes = 2;
  bool per_token_head_scales = false;  // int8/fp8_per_token_head: 2 * block * kv_heads * 4 more (AttentionSpec)
  bool ds_mla = false;                 // fp8_ds_mla: 656 bytes a token (MLAAttentionSpec)
};
CacheFormat cache_format(const std::string& dtype, const ModelFacts& m) {
  CacheFormat f;
  if (dtype == "auto") f.bytes = m.dtype_bytes;
  else if (dtype == "float16" || dtype == "bfloat16") f.bytes = 2;
  else if (dtype == "fp8" || dtype == "fp8_e4m3" || dtype == "fp8_e5m2" || dtype == "fp8_inc") f.bytes = 1;
  else if (dtype == "int8_per_token_head" || dtype == "fp8_per_token_head") {
    f.bytes = 1;
    f.per_token_head_scales = true;
  } else if (dtype == "fp8_ds_mla") {
    if (!m.mla) throw refuses("--kv-cache-dtype fp8_ds_mla is for MLA models (DeepSeek V3.2's sparse MLA) only");
    f.bytes = 1;
    f.ds_mla = true;
  } else {
    throw Error(Reason::usage, "--kv-cache-dtype " + dtype + " is not planned yet (packed layouts)");
  }
  return f;
}

// A layer's KV cache spec, as far as grouping goes: FullAttentionSpec, SlidingWindowSpec, MambaSpec.
enum class SpecKind { full, sliding, state };
SpecKind spec_of(const Layer& l) {
  if (l.kind == LayerKind::recurrent) return SpecKind::state;
  return l.sliding ? SpecKind::sliding : SpecKind::full;
}

// One KV cache group: its layers (whole model) and their spec.
struct Group {
  SpecKind kind = SpecKind::full;
  std::vector<std::size_t> layers;
};

// get_kv_cache_groups: one group when every layer has the same spec (_get_kv_cache_groups_uniform_spec),
// else (_get_kv_cache_groups_uniform_page_size) per spec, in the order of its first layer as vLLM's dict of
// specs meets them, layers[i::n] in groups of the smallest spec's count (the largest's when it is under 1.5
// times that), the last group of a spec padded.
std::vector<Group> groups_of(const ModelFacts& m) {
  std::vector<std::pair<SpecKind, std::vector<std::size_t>>> by_spec;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].kind == LayerKind::none) continue;
    const SpecKind kind = spec_of(m.layers[i]);
    auto it = std::find_if(by_spec.begin(), by_spec.end(), [&](const auto& s) { return s.first == kind; });
    if (it == by_spec.end()) it = by_spec.insert(by_spec.end(), {kind, {}});
    it->second.push_back(i);
  }
  std::size_t low = SIZE_MAX, high = 0;
  for (const auto& [kind, layers] : by_spec) {
    low = std::min(low, layers.size());
    high = std::max(high, layers.size());
  }
  const std::size_t group_size = 2 * high < 3 * low ? high : low;
  std::vector<Group> out;
  for (const auto& [kind, layers] : by_spec) {
    const std::size_t n = cdiv(layers.size(), group_size);
    for (std::size_t g = 0; g < n; ++g) {
      Group group{kind, {}};
      for (std::size_t i = g; i < layers.size(); i += n) group.layers.push_back(layers[i]);
      out.push_back(std::move(group));
    }
  }
  return out;
}

struct Rules {
  std::uint64_t max_model_len = 0, batched = 0, sliding_window = 0, block = 16, page = 0;
  std::uint64_t state_blocks = 1;  // MambaSpec's pages a request: mode none 1, align 2 (the running state and a copy)
  // A spec's max_memory_usage_bytes: FullAttentionSpec cdiv(len, block) pages; SlidingWindowSpec
  // cdiv(min(window - 1 + max_num_batched_tokens, len), block) + 1 pages; MambaSpec in mamba_cache_mode
  // "none" one page (its state, padded to the attention page), "align" two, whatever the length.
  std::uint64_t pages(SpecKind kind, std::uint64_t len) const {
    if (kind == SpecKind::state) return state_blocks;
    if (kind == SpecKind::full) return cdiv(len, block);
    return cdiv(std::min(plus(sliding_window - 1, batched), len), block) + 1;
  }
};

// One recurrent layer's state on one rank (MambaSpec.page_size_bytes before padding): the conv state and
// the temporal state, each its shape's elements times its dtype.
struct StatePage {
  std::uint64_t conv = 0, temporal = 0;
  std::uint64_t total() const { return conv + temporal; }
};

// vllm.distributed.divide: vLLM asserts that TP divides a state's sharded dimension.
std::uint64_t divide(std::uint64_t n, std::uint32_t tp, const char* what) {
  if (n % tp)
    throw refuses(std::string(what) + " (" + std::to_string(n) + ") is not divisible by tensor parallel size (" +
                  std::to_string(tp) + ")");
  return n / tp;
}

// MambaStateDtypeCalculator: the conv state in --mamba-cache-dtype ("auto": the model's dtype), the temporal
// state in --mamba-ssm-cache-dtype ("auto": the conv state's). Qwen3.5 reads config.json's mamba_ssm_dtype
// where the flag is "auto" (model_executor/models/config.py).
StatePage state_page(const ModelFacts& m, const VllmArgs& a, std::uint32_t tp) {
  auto bytes_of = [&](const std::string& dtype, std::uint64_t fallback) -> std::uint64_t {
    if (dtype == "float32") return 4;
    if (dtype == "float16" || dtype == "bfloat16") return 2;
    return fallback;
  };
  const auto& st = m.state;
  const std::uint64_t conv_bytes = bytes_of(a.mamba_cache_dtype, m.dtype_bytes);
  const std::uint64_t ssm_bytes = bytes_of(a.mamba_ssm_cache_dtype == "auto" ? st.ssm_dtype : a.mamba_ssm_cache_dtype,
                                           conv_bytes);
  StatePage p;
  if (st.kind == StateKind::gated_delta_net) {
    // gated_delta_net_state_shape: conv (conv_kernel - 1, conv_dim / tp), temporal (v_heads / tp, v_dim, k_dim).
    const std::uint64_t conv_dim = st.k_dim * st.k_heads * 2 + st.v_dim * st.v_heads;
    p.conv = (st.conv_kernel - 1) * divide(conv_dim, tp, "the gated delta net's conv dimension") * conv_bytes;
    p.temporal = divide(st.v_heads, tp, "linear_num_value_heads") * st.v_dim * st.k_dim * ssm_bytes;
  } else {
    // mamba2_state_shape: groups widened to TP where TP does not divide them (extra_groups_for_head_shards),
    // conv (conv_kernel - 1, (intermediate + 2 * groups * state) / tp), temporal (heads / tp, head_dim, state).
    const std::uint64_t groups = st.groups % tp == 0 ? st.groups : tp;  // n_groups + (tp - n_groups)
    const std::uint64_t conv_dim = st.intermediate + 2 * groups * st.state;
    p.conv = (st.conv_kernel - 1) * divide(conv_dim, tp, "the Mamba2 conv dimension") * conv_bytes;
    p.temporal = divide(st.heads, tp, "the Mamba2 heads") * st.head_dim * st.state * ssm_bytes;
  }
  return p;
}

// One rank's projected groups: the group's layers on this stage.
struct RankGroups {
  std::vector<Group> groups;
  std::size_t group_size = 0;  // the most layers of one group here (padding layers fill the others)
};
RankGroups project(const std::vector<Group>& global, std::size_t first, std::size_t last) {
  RankGroups r;
  for (const auto& g : global) {
    Group p{g.kind, {}};
    for (auto l : g.layers)
      if (l >= first && l < last) p.layers.push_back(l);
    r.group_size = std::max(r.group_size, p.layers.size());
    r.groups.push_back(std::move(p));
  }
  return r;
}

// _max_memory_usage_bytes_from_groups: group_size * page * the pages each group's spec needs.
std::uint64_t request_bytes(const RankGroups& r, const Rules& rules, std::uint64_t len) {
  std::uint64_t pages = 0;
  for (const auto& g : r.groups) pages = plus(pages, rules.pages(g.kind, len));
  return times(times(r.group_size, rules.page), pages);
}

// _estimate_max_model_len_from_groups: the longest request that fits `available` (0: not one token).
std::uint64_t longest(const RankGroups& r, const Rules& rules, std::int64_t available, std::uint64_t upto) {
  if (available <= 0 || request_bytes(r, rules, 1) > static_cast<std::uint64_t>(available)) return 0;
  std::uint64_t low = 1, high = upto, best = 1;
  while (low <= high) {
    std::uint64_t mid = low + (high - low) / 2;
    if (request_bytes(r, rules, mid) <= static_cast<std::uint64_t>(available)) {
      best = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return best;
}

}  // namespace

PlacedWeights place_weights(const std::vector<checkpoint::FileHeader>& files, std::size_t layers) {
  PlacedWeights w;
  w.layer_split.assign(layers, 0);
  w.layer_whole.assign(layers, 0);
  for (const auto& f : files) {
    if (f.format != checkpoint::Format::safetensors) continue;
    for (const auto& t : f.tensors) {
      const bool split = t.shape.size() >= 2 && !checkpoint::is_router_module(checkpoint::module_of(t.name));
      if (auto layer = layer_of(t.name)) {
        if (*layer < layers) (split ? w.layer_split : w.layer_whole)[*layer] += t.bytes;
        continue;  // past the model's layers: an MTP layer vLLM does not load
      }
      const bool last = t.name.find("lm_head") != std::string::npos || t.name.rfind("model.norm.", 0) == 0 ||
                        t.name.rfind("norm.", 0) == 0;
      (last ? (split ? w.last_split : w.last_whole) : (split ? w.first_split : w.first_whole)) += t.bytes;
    }
  }
  return w;
}

std::pair<std::size_t, std::size_t> pp_layers(std::size_t layers, std::uint32_t rank, std::uint32_t size) {
  std::vector<std::size_t> parts(size, layers / size);
  const std::size_t remaining = layers % size;
  for (std::size_t i = 2; i < remaining + 2 && i <= size; ++i) ++parts[size - i];
  std::size_t first = 0;
  for (std::uint32_t r = 0; r < rank; ++r) first += parts[r];
  return {first, first + parts[rank]};
}

std::uint64_t activation_estimate(const ModelFacts& m, std::uint64_t tokens, std::uint32_t tp) {
  const std::uint64_t width = plus(times(3, m.intermediate) / std::max<std::uint32_t>(tp, 1), times(3, m.hidden));
  return plus(times(tokens, times(width, m.dtype_bytes)), 512ull << 20);
}

Plan plan_vllm(const ModelFacts& m, const EngineSettings& e, const PlacedWeights& w, const std::vector<GpuFacts>& gpus,
               const std::vector<std::uint64_t>& profiled) {
  const VllmArgs& a = e.vllm;
  const std::uint32_t tp = a.tensor_parallel, pp = a.pipeline_parallel;
  const std::uint64_t ranks = std::uint64_t{tp} * pp;
  if (m.heads % tp)
    throw refuses("Total number of attention heads (" + std::to_string(m.heads) +
                  ") must be divisible by tensor parallel size (" + std::to_string(tp) + ").");
  if (pp > m.layers.size()) throw refuses("pipeline parallel size exceeds the number of layers");
  if (!gpus.empty() && gpus.size() < ranks)
    throw Error(Reason::usage, std::to_string(ranks) + " ranks (tp " + std::to_string(tp) + " x pp " +
                                   std::to_string(pp) + ") but " + std::to_string(gpus.size()) + " cards are given");
  const CacheFormat format = cache_format(a.kv_cache_dtype, m);

  VllmFigures v;
  v.tensor_parallel = tp;
  v.pipeline_parallel = pp;
  v.kv_cache_dtype = a.kv_cache_dtype;
  if (a.max_model_len && m.context_length && *a.max_model_len > m.context_length)
    throw refuses("User-specified max_model_len (" + std::to_string(*a.max_model_len) +
                  ") is greater than the derived max_model_len (" + std::to_string(m.context_length) +
                  " in model's config.json). To allow overriding this maximum, set the env var "
                  "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.");
  v.max_model_len = a.max_model_len ? *a.max_model_len : m.context_length;
  if (v.max_model_len == 0) throw Error(Reason::usage, "no --max-model-len, and config.json names none");
  // vLLM's defaults for `vllm serve` (vllm/engine/arg_utils.py): 8192 batched tokens and 1024 sequences on
  // cards of 70 GiB or more, else 2048 and 256.
  const bool large = !gpus.empty() && gpus.front().total >= 70 * kGiB;
  v.max_num_batched_tokens = a.max_num_batched_tokens ? *a.max_num_batched_tokens : (large ? 8192 : 2048);
  v.max_num_seqs = a.max_num_seqs ? *a.max_num_seqs : (large ? 1024 : 256);
  // The cache block: 16 tokens (CacheConfig.DEFAULT_BLOCK_SIZE); MLA's FlashMLA backend (Hopper) takes 64.
  v.block_size = a.block_size ? *a.block_size : (m.mla ? 64 : 16);
  // Every attention layer here has the same page (config.json gives one head shape), so no unification
  // among them; a hybrid's recurrent layers are unified with them below.
  auto attention = std::find_if(m.layers.begin(), m.layers.end(),
                                [](const Layer& l) { return l.kind == LayerKind::attention; });
  if (attention == m.layers.end()) throw Error(Reason::usage, "the model has no attention layer: not planned");
  const Layer& first = *attention;
  const std::uint64_t kv_heads = m.mla ? 1 : std::max<std::uint64_t>(1, first.n_head_kv / tp);
  const bool hybrid = m.state.kind != StateKind::none;
  std::uint64_t state_blocks = 1;
  if (hybrid) {
    // What the transcribed rules do not cover is refused rather than sized by a guess.
    if (m.mla || format.per_token_head_scales)
      throw Error(Reason::usage, "recurrent layers beside MLA or per-token-head scales are not planned yet");
    if (a.num_speculative_tokens || !a.speculative_method.empty())
      throw Error(Reason::usage,
                  "speculative decoding on a model with recurrent layers is not planned yet (its draft layers and "
                  "the state's speculative blocks)");
    // The state mode (MambaModelConfig): none unless prefix caching is on, which makes it "all" for models
    // that support Mamba prefix caching (the Mamba2 families) and "align" for the others (gated delta nets).
    // vLLM v0.11 turned prefix caching off for hybrids; later releases enable it by default: name it.
    // Without prefix caching the mode is none whatever --mamba-cache-mode says; "all" falls back to "align"
    // where the model does not support it.
    std::string mode = "none";
    if (a.prefix_caching.value_or(false)) {
      const bool supports_all = m.state.kind == StateKind::mamba2;
      mode = a.mamba_cache_mode.empty() || a.mamba_cache_mode == "none" ? (supports_all ? "all" : "align")
                                                                        : a.mamba_cache_mode;
      if (mode == "all" && !supports_all) mode = "align";
    }
    if (mode == "all")
      throw Error(Reason::usage, "mamba cache mode all (prefix caching on a Mamba2 hybrid) is not planned yet");
    state_blocks = mode == "align" ? 2 : 1;
    v.mamba_cache_mode = mode;
    // HybridAttentionMambaModelConfig.verify_and_update_config (prefix caching off): the attention block is
    // the least multiple of 16 tokens whose page holds one state, unless --block-size is larger; the state
    // page is then padded to the attention page.
    const StatePage state = state_page(m, a, tp);
    v.state_bytes = state.total();
    v.state_conv_bytes = state.conv;
    const std::uint64_t token_page = kv_heads * (std::uint64_t{first.head_k} + first.head_v) * format.bytes;
    const std::uint64_t needed = 16 * cdiv(state.total(), 16 * token_page);
    if (needed > UINT32_MAX) throw Error(Reason::usage, "a recurrent state past 2^32 tokens of attention page");
    if (!a.block_size || *a.block_size < needed) v.block_size = static_cast<std::uint32_t>(needed);
  }

  Rules rules;
  rules.state_blocks = state_blocks;
  rules.max_model_len = v.max_model_len;
  rules.batched = v.max_num_batched_tokens;
  rules.sliding_window = m.sliding_window;
  rules.block = v.block_size;
  if (format.ds_mla) rules.page = times(rules.block, 656);
  else if (m.mla) rules.page = times(rules.block, std::uint64_t{first.head_k} * format.bytes);
  else
    rules.page = plus(times(times(rules.block, kv_heads), (std::uint64_t{first.head_k} + first.head_v) * format.bytes),
                      format.per_token_head_scales ? times(times(rules.block, kv_heads), 8) : 0);
  v.page_bytes = rules.page;

  const auto global = groups_of(m);
  v.groups = static_cast<std::uint32_t>(global.size());
  std::vector<RankGroups> by_rank;
  std::vector<std::pair<std::size_t, std::size_t>> stage_layers;
  for (std::uint32_t s = 0; s < pp; ++s) stage_layers.push_back(pp_layers(m.layers.size(), s, pp));
  for (std::uint64_t r = 0; r < ranks; ++r) {
    auto [lo, hi] = stage_layers[r / tp];
    by_rank.push_back(project(global, lo, hi));
  }
  v.group_size = static_cast<std::uint32_t>(by_rank.front().group_size);
  for (const auto& r : by_rank) v.request_bytes = std::max(v.request_bytes, request_bytes(r, rules, v.max_model_len));

  // Each rank's weights: its stage's layers split over TP, the embeddings first, the head last.
  std::vector<std::uint64_t> weights(ranks, 0);
  for (std::uint64_t r = 0; r < ranks; ++r) {
    const std::uint32_t stage = static_cast<std::uint32_t>(r / tp);
    auto [lo, hi] = stage_layers[stage];
    std::uint64_t split = 0, whole = 0;
    for (std::size_t l = lo; l < hi && l < w.layer_split.size(); ++l) {
      split += w.layer_split[l];
      whole += w.layer_whole[l];
    }
    if (stage == 0) split += w.first_split, whole += w.first_whole;
    if (stage == pp - 1) split += w.last_split, whole += w.last_whole;
    weights[r] = plus(cdiv(split, tp), whole);
  }

  Plan p;
  p.engine = Engine::vllm;
  p.context = static_cast<std::uint32_t>(std::min<std::uint64_t>(v.max_model_len, UINT32_MAX));
  p.sequences = static_cast<std::uint32_t>(v.max_num_seqs);
  p.unified = true;
  p.ubatch = static_cast<std::uint32_t>(v.max_num_batched_tokens);
  p.swa_cells = m.sliding_window;
  for (auto x : w.layer_split) p.weights_bytes += x;
  for (auto x : w.layer_whole) p.weights_bytes += x;
  p.weights_bytes += w.first_split + w.first_whole + w.last_split + w.last_whole;

  // The memory each rank gives its KV cache: --kv-cache-memory-bytes, else the card's share less the
  // weights and the profiling estimate.
  if (!profiled.empty() && profiled.size() != ranks)
    throw Error(Reason::usage, "the profiled KV memory names " + std::to_string(profiled.size()) + " ranks, not " +
                                   std::to_string(ranks));
  const bool known = !profiled.empty() || a.kv_cache_memory_bytes.has_value() || !gpus.empty();
  v.activation_estimate = activation_estimate(m, v.max_num_batched_tokens, tp);
  for (std::uint64_t r = 0; r < ranks && known; ++r) {
    if (!profiled.empty()) {
      v.available.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(profiled[r], INT64_MAX)));
      continue;
    }
    if (a.kv_cache_memory_bytes) {
      v.available.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(*a.kv_cache_memory_bytes, INT64_MAX)));
      continue;
    }
    v.available_estimated = true;
    char util_text[32];
    std::snprintf(util_text, sizeof util_text, "%g", a.gpu_memory_utilization);
    const auto requested = static_cast<std::uint64_t>(static_cast<double>(gpus[r].total) * a.gpu_memory_utilization);
    if (gpus[r].free < requested && v.refusal.empty())
      v.refusal = "Free memory on device cuda:" + std::to_string(r) + " (" +
                  gib(static_cast<std::int64_t>(gpus[r].free)) + "/" + gib(static_cast<std::int64_t>(gpus[r].total)) +
                  " GiB) on startup is less than desired GPU memory utilization (" + std::string(util_text) + ", " +
                  gib(static_cast<std::int64_t>(requested)) +
                  " GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";
    // Held at 2^61 each, the difference cannot wrap.
    auto held = [](std::uint64_t x) { return static_cast<std::int64_t>(std::min<std::uint64_t>(x, 1ull << 61)); };
    v.available.push_back(held(requested) - held(weights[r]) - held(v.activation_estimate));
  }

  // --max-model-len -1 / auto (_auto_fit_max_model_len): the model's length, lowered to the longest every
  // rank holds; none at all is vLLM's "Cannot auto-fit max_model_len".
  if (a.auto_fit && known) {
    std::uint64_t fit_len = v.max_model_len;
    for (std::uint64_t r = 0; r < ranks; ++r)
      fit_len = std::min(fit_len, longest(by_rank[r], rules, v.available[r], v.max_model_len));
    if (fit_len == 0 && v.refusal.empty())
      v.refusal =
          "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
          "Try increasing `gpu_memory_utilization`.";
    v.max_model_len = std::max<std::uint64_t>(fit_len, 1);
    rules.max_model_len = v.max_model_len;
    p.context = static_cast<std::uint32_t>(std::min<std::uint64_t>(v.max_model_len, UINT32_MAX));
    v.request_bytes = 0;
    for (const auto& r : by_rank) v.request_bytes = std::max(v.request_bytes, request_bytes(r, rules, v.max_model_len));
  }
  p.fits = v.refusal.empty();
  if (known) {
    // check_enough_kv_cache_memory per rank, then each rank's blocks and the minimum.
    std::uint64_t blocks = UINT64_MAX, most = UINT64_MAX;
    const std::uint64_t upto = std::max<std::uint64_t>(v.max_model_len, m.context_length);
    for (std::uint64_t r = 0; r < ranks; ++r) {
      const std::int64_t avail = v.available[r];
      const std::uint64_t need = request_bytes(by_rank[r], rules, v.max_model_len);
      most = std::min(most, longest(by_rank[r], rules, avail, upto));
      if (p.fits && (avail <= 0 || need > static_cast<std::uint64_t>(avail))) {
        p.fits = false;
        if (avail <= 0) {
          v.refusal =
              "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
              "initializing the engine.";
        } else {
          v.estimated_max_model_len = longest(by_rank[r], rules, avail, v.max_model_len);
          v.refusal = "To serve at least one request with the models's max seq len (" +
                      std::to_string(v.max_model_len) + "), (" + gib(static_cast<std::int64_t>(need)) +
                      " GiB KV cache is needed, which is larger than the available KV cache memory (" + gib(avail) +
                      " GiB). " +
                      (*v.estimated_max_model_len > 0 ? "Based on the available memory, the estimated maximum model "
                                                        "length is " +
                                                            std::to_string(*v.estimated_max_model_len) + ". "
                                                      : "") +
                      "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                      "engine.";
        }
      }
      const std::uint64_t n = avail > 0 && by_rank[r].group_size
                                  ? static_cast<std::uint64_t>(avail) / rules.page / by_rank[r].group_size
                                  : 0;
      blocks = std::min(blocks, n);
    }
    v.num_blocks = blocks;
    // _report_kv_cache_config (rank 0's groups): blocks per group times the block, and the requests of
    // max_model_len the blocks hold.
    // A MambaSpec's block (mode none) is max_model_len tokens: the smallest group's block is printed.
    const std::uint64_t min_block = hybrid ? std::min<std::uint64_t>(rules.block, v.max_model_len) : rules.block;
    v.kv_tokens = blocks / global.size() * min_block;
    v.max_sequences = blocks / global.size();
    std::uint64_t per_request = 0;
    for (const auto& g : by_rank.front().groups) per_request += rules.pages(g.kind, v.max_model_len);
    v.max_concurrency = static_cast<double>(blocks) / static_cast<double>(std::max<std::uint64_t>(per_request, 1));
    p.max_context = static_cast<std::uint32_t>(std::min<std::uint64_t>(most, UINT32_MAX));
    p.max_slots = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(static_cast<std::uint64_t>(std::floor(*v.max_concurrency)), v.max_num_seqs));
  }

  // The rows: one per rank (card r), the layers of its stage, its KV as allocated.
  const std::uint64_t blocks = v.num_blocks.value_or(0);
  for (std::uint64_t r = 0; r < ranks && !gpus.empty(); ++r) {
    GpuRow row;
    row.index = static_cast<std::uint32_t>(r);
    row.total = gpus[r].total;
    row.free = gpus[r].free;
    row.source = gpus[r].source;
    row.name = gpus[r].name;
    auto [lo, hi] = stage_layers[r / tp];
    row.layers = hi - lo;
    row.weights_bytes = weights[r];
    row.kv_bytes = blocks * rules.page * by_rank[r].group_size;
    // Short or left against the KV a max_model_len request needs: what vLLM checks before it allocates.
    const std::uint64_t need = std::min<std::uint64_t>(request_bytes(by_rank[r], rules, v.max_model_len),
                                                       INT64_MAX / 2);
    row.left = v.available[r] - static_cast<std::int64_t>(need);
    p.gpus.push_back(row);
  }
  for (std::uint64_t r = 0; r < ranks; ++r)
    p.kv_bytes = plus(p.kv_bytes, blocks ? blocks * rules.page * by_rank[r].group_size
                                         : request_bytes(by_rank[r], rules, v.max_model_len));
  p.cells = blocks * rules.block;

  // Each layer on its stage's first rank, its KV over the stage's TP ranks.
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    LayerPlan l;
    l.index = static_cast<std::uint32_t>(i);
    l.kind = m.layers[i].kind;
    l.sliding = m.layers[i].sliding;
    for (std::uint32_t s = 0; s < pp; ++s)
      if (i >= stage_layers[s].first && i < stage_layers[s].second)
        l.device = gpus.empty() ? -1 : static_cast<std::int32_t>(s * tp);
    const std::uint64_t bytes = times(blocks * rules.page, tp);
    if (l.kind == LayerKind::recurrent) {
      // Its view of the pool: a state a block, the conv state first, then the temporal state and the padding.
      l.r_bytes = std::min(bytes, times(times(blocks, v.state_conv_bytes), tp));
      l.s_bytes = bytes - l.r_bytes;
    } else if (l.kind == LayerKind::attention) {
      l.cells = blocks * rules.block;
      if (m.mla) l.k_bytes = bytes;
      else l.k_bytes = l.v_bytes = bytes / 2;
    }
    l.weights_bytes = i < w.layer_split.size() ? w.layer_split[i] + w.layer_whole[i] : 0;
    p.layers.push_back(l);
  }
  p.tensor_split.assign(gpus.empty() ? 0 : ranks, 1.0 / static_cast<double>(ranks));
  p.vllm = std::move(v);
  return p;
}

}  // namespace provkit::fit
