#include "provkit/fit/plan.hpp"

#include <algorithm>
#include <numeric>

#include "provkit/fit/vllm.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/text.hpp"

namespace provkit::fit {

namespace {

using json = nlohmann::json;

constexpr std::uint64_t kPad = 256;        // llama.cpp pads its cache cells to this (llama_kv_cache::get_padding)
constexpr std::uint32_t kMostSlots = 256;  // LLAMA_MAX_SEQ

std::uint64_t pad(std::uint64_t n) { return (n + kPad - 1) / kPad * kPad; }

Error refuses(const std::string& why) { return Error(FitRefusal::engine_refuses, "llama.cpp refuses this: " + why); }

// The checks llama_init_from_model and the KV cache make before allocating.
void check_refusals(const ModelFacts& m, const EngineSettings& e, bool flash_attn) {
  if (e.type_v.quantized() && !flash_attn) throw refuses("quantized V cache requires flash_attn to be enabled");
  // MLA keeps one latent for K and V.
  if (m.mla && e.type_k.name != e.type_v.name)
    throw refuses("model does not support different K (" + e.type_k.name + ") and V (" + e.type_v.name +
                  ") cache types");
  for (const auto& l : m.layers) {
    if (l.kind != LayerKind::attention) continue;
    if (l.head_k % e.type_k.block_size)
      throw refuses("K cache type " + e.type_k.name + " with block size " + std::to_string(e.type_k.block_size) +
                    " does not divide n_embd_head_k=" + std::to_string(l.head_k));
    if (!m.mla && l.head_v % e.type_v.block_size)
      throw refuses("V cache type " + e.type_v.name + " with block size " + std::to_string(e.type_v.block_size) +
                    " does not divide n_embd_head_v=" + std::to_string(l.head_v));
  }
}

struct Shape {
  std::uint32_t context = 0, sequences = 1, ubatch = 512;
  bool unified = false, flash_attn = true;
  std::uint64_t cells = 0, swa_cells = 0;  // per stream
  std::uint64_t streams = 1;
};

Shape shape_of(const ModelFacts& m, const EngineSettings& e, std::uint32_t context, std::uint32_t sequences) {
  Shape s;
  s.sequences = sequences;
  s.unified = e.unified();
  s.flash_attn = e.flash_attn != FlashAttention::off;  // auto: the cache is made for flash attention
  const std::uint64_t n_ctx = context ? context : m.context_length;
  s.context = static_cast<std::uint32_t>(pad(n_ctx));
  // llama-context.cpp: n_batch = min(n_ctx, -b), n_ubatch = min(n_batch, -ub).
  s.ubatch = static_cast<std::uint32_t>(std::min<std::uint64_t>({n_ctx, e.batch, e.ubatch}));
  // One stream per sequence unless unified; each stream PAD(n_ctx / n_seq, 256) cells (llama-context.cpp).
  s.streams = s.unified ? 1 : sequences;
  s.cells = s.unified ? s.context : pad(s.context / sequences);
  // llama-kv-cache-iswa.cpp: the sliding layers keep the window (per stream, or times the slots when unified) and a
  // ubatch.
  s.swa_cells = e.swa_full
                    ? s.cells
                    : std::min(s.cells, pad(std::uint64_t{m.sliding_window} * (s.unified ? sequences : 1) + s.ubatch));
  return s;
}

// Each layer's cache bytes at this shape (no devices yet).
std::vector<LayerPlan> layer_bytes(const ModelFacts& m, const EngineSettings& e, const Shape& s) {
  std::uint64_t widest_v = 0;
  for (const auto& l : m.layers)
    if (l.kind == LayerKind::attention) widest_v = std::max(widest_v, l.v_width());
  std::vector<LayerPlan> out(m.layers.size());
  const std::uint64_t rows = std::max<std::uint64_t>(1, s.sequences);  // recurrent rows: one state per sequence
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    LayerPlan& p = out[i];
    p.index = static_cast<std::uint32_t>(i);
    p.kind = l.kind;
    p.sliding = l.sliding;
    if (l.kind == LayerKind::attention) {
      p.cells = (l.sliding ? s.swa_cells : s.cells) * s.streams;
      p.k_bytes = e.type_k.row_bytes(l.k_width()) * p.cells;
      // Without flash attention V is stored transposed, every layer as wide as the widest (llama-kv-cache.cpp).
      if (!m.mla) p.v_bytes = e.type_v.row_bytes(s.flash_attn ? l.v_width() : widest_v) * p.cells;
    } else if (l.kind == LayerKind::recurrent) {
      // llama-memory-recurrent.cpp: R and S always F32, one row per sequence.
      p.r_bytes = m.recurrent_r * 4 * rows;
      p.s_bytes = m.recurrent_s * 4 * rows;
    }
  }
  return out;
}

// llama-model.cpp's layer split: the last -ngl layers (the output counting as layer n_layer) over the
// cards by the cumulative -ts proportions (default: each card's free memory).
struct Devices {
  std::vector<std::int32_t> layer;  // n_layer + 1 entries: the last is the output layer
  std::vector<double> split;        // each card's share
};
Devices assign(const EngineSettings& e, std::size_t n_layer, const std::vector<GpuFacts>& gpus) {
  Devices d;
  d.layer.assign(n_layer + 1, -1);
  if (gpus.empty()) return d;
  if (e.tensor_split.size() > gpus.size())
    throw Error(Reason::usage, "-ts names " + std::to_string(e.tensor_split.size()) + " cards, but " +
                                   std::to_string(gpus.size()) + " are given");
  std::vector<double> share(gpus.size(), 0);
  double sum = std::accumulate(e.tensor_split.begin(), e.tensor_split.end(), 0.0);
  for (std::size_t g = 0; g < gpus.size(); ++g)
    share[g] = sum > 0 ? (g < e.tensor_split.size() ? e.tensor_split[g] : 0) : static_cast<double>(gpus[g].free);
  if (e.split_mode == SplitMode::none) {
    if (e.main_gpu >= gpus.size()) throw Error(Reason::usage, "-mg names a card that is not there");
    std::fill(share.begin(), share.end(), 0);
    share[e.main_gpu] = 1;
  }
  double total = std::accumulate(share.begin(), share.end(), 0.0);
  if (total <= 0) throw Error(Reason::usage, "the tensor split gives no card a layer");
  std::vector<float> cumulative(gpus.size());
  double run = 0;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    d.split.push_back(share[g] / total);
    run += share[g];
    cumulative[g] = static_cast<float>(run / total);  // llama.cpp keeps these as float
  }
  const auto n = static_cast<std::int64_t>(n_layer);
  const std::int64_t ngl = e.gpu_layers ? *e.gpu_layers : n + 1;
  const std::int64_t start = std::max<std::int64_t>(n - ngl, 0);
  const std::int64_t active = std::min<std::int64_t>(ngl, n + 1);
  for (std::int64_t il = 0; il <= n; ++il) {
    if (il < start || il - start >= active) continue;
    auto at = std::upper_bound(cumulative.begin(), cumulative.end(), static_cast<float>(il - start) / active);
    d.layer[static_cast<std::size_t>(il)] = static_cast<std::int32_t>(
        std::min<std::ptrdiff_t>(at - cumulative.begin(), static_cast<std::ptrdiff_t>(gpus.size()) - 1));
  }
  return d;
}

struct Totals {
  std::uint64_t kv = 0, recurrent = 0, host = 0;
  std::vector<GpuRow> gpus;
  bool fits = true;
};
Totals place(std::vector<LayerPlan>& layers, const EngineSettings& e, const Weights& w, const Devices& d,
             const std::vector<GpuFacts>& gpus) {
  Totals t;
  for (std::size_t g = 0; g < gpus.size(); ++g)
    t.gpus.push_back({.index = static_cast<std::uint32_t>(g),
                      .total = gpus[g].total,
                      .free = gpus[g].free,
                      .source = gpus[g].source,
                      .name = gpus[g].name});
  t.host = w.input_bytes;
  auto add = [&](std::int32_t device, std::uint64_t weights, std::uint64_t kv, std::uint64_t rec, bool layer) {
    if (device < 0) {
      t.host += weights + kv + rec;
      return;
    }
    auto& row = t.gpus[static_cast<std::size_t>(device)];
    row.weights_bytes += weights;
    row.kv_bytes += kv;
    row.recurrent_bytes += rec;
    if (layer) ++row.layers;
  };
  for (auto& l : layers) {
    l.device = d.layer[l.index];
    l.weights_bytes = l.index < w.layer_bytes.size() ? w.layer_bytes[l.index] : 0;
    const std::uint64_t kv = l.k_bytes + l.v_bytes, rec = l.r_bytes + l.s_bytes;
    t.kv += kv;
    t.recurrent += rec;
    add(l.device, l.weights_bytes, 0, 0, true);
    // The caches follow their layer's device, or stay on the host with -nkvo.
    add(e.kv_offload ? l.device : -1, 0, kv, rec, false);
  }
  add(d.layer.back(), w.output_bytes, 0, 0, false);
  for (auto& row : t.gpus) {
    row.left = static_cast<std::int64_t>(row.free) -
               static_cast<std::int64_t>(row.weights_bytes + row.kv_bytes + row.recurrent_bytes);
    if (row.left < 0) t.fits = false;
  }
  return t;
}

bool fits_at(const ModelFacts& m, const EngineSettings& e, const Weights& w, const Devices& d,
             const std::vector<GpuFacts>& gpus, std::uint32_t context, std::uint32_t sequences) {
  auto layers = layer_bytes(m, e, shape_of(m, e, context, sequences));
  return place(layers, e, w, d, gpus).fits;
}

const char* kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::attention: return "attention";
    case LayerKind::recurrent: return "recurrent";
    case LayerKind::none: return "none";
  }
  return "?";
}

}  // namespace

std::string_view source_name(GpuSource s) { return s == GpuSource::local ? "local" : "gpu_memory"; }

std::vector<GpuFacts> parse_gpu_memory(const std::string& list) {
  std::vector<GpuFacts> out;
  std::size_t start = 0;
  while (true) {
    auto end = list.find(',', start);
    auto part = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty()) throw Error(ExitCode::usage, "wants sizes like 24G,24G, not '" + util::printable(list) + "'");
    auto bytes = util::parse_size(part);
    GpuFacts card;
    card.total = card.free = bytes;
    out.push_back(card);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

Plan plan(const ModelFacts& m, const EngineSettings& e, const Weights& w, const std::vector<GpuFacts>& gpus) {
  if (e.engine == Engine::vllm) throw Error(Reason::internal, "fit::plan is llama.cpp's; vLLM's is fit::plan_vllm");
  if (e.split_mode == SplitMode::row) throw Error(Reason::usage, "-sm row is not planned yet");
  Plan p;
  p.engine = e.engine;
  const Shape s = shape_of(m, e, e.context, e.sequences());
  check_refusals(m, e, s.flash_attn);
  p.context = s.context;
  p.sequences = s.sequences;
  p.unified = s.unified;
  p.flash_attn = s.flash_attn;
  p.ubatch = s.ubatch;
  p.cells = s.cells;
  p.swa_cells = m.sliding_window ? s.swa_cells : 0;
  p.layers = layer_bytes(m, e, s);
  const Devices d = assign(e, m.layers.size(), gpus);
  p.tensor_split = d.split;
  Totals t = place(p.layers, e, w, d, gpus);
  p.kv_bytes = t.kv;
  p.recurrent_bytes = t.recurrent;
  p.weights_bytes = w.total();
  p.host_bytes = t.host;
  p.gpus = std::move(t.gpus);
  p.fits = t.fits;
  if (gpus.empty()) return p;

  // The largest context (a multiple of 256, up to the training context or -c) at these slots; the most slots
  // at this context per slot. Both grow the caches monotonically: binary search.
  // Past the training context only as far as the line itself asks.
  std::uint32_t low = 0, high = static_cast<std::uint32_t>(pad(std::max({m.context_length, s.context, 1u})) / kPad);
  while (low < high) {
    std::uint32_t mid = (low + high + 1) / 2;
    if (fits_at(m, e, w, d, gpus, mid * static_cast<std::uint32_t>(kPad), s.sequences)) low = mid;
    else high = mid - 1;
  }
  p.max_context = low * static_cast<std::uint32_t>(kPad);
  const std::uint32_t per_slot = s.unified ? s.context : s.context / s.sequences;
  std::uint32_t most = 0;
  for (std::uint32_t n = 1; n <= kMostSlots; ++n) {
    std::uint64_t context = s.unified ? per_slot : std::uint64_t{per_slot} * n;
    if (context > (1u << 30) || !fits_at(m, e, w, d, gpus, static_cast<std::uint32_t>(context), n)) break;
    most = n;
  }
  p.max_slots = most;
  return p;
}

json Plan::to_json() const {
  json layers_json = json::array();
  for (const auto& l : layers)
    layers_json.push_back({{"index", l.index},
                           {"kind", kind_name(l.kind)},
                           {"sliding", l.sliding},
                           {"device", l.device < 0 ? json("host") : json(l.device)},
                           {"cells", l.cells},
                           {"k_bytes", l.k_bytes},
                           {"v_bytes", l.v_bytes},
                           {"r_bytes", l.r_bytes},
                           {"s_bytes", l.s_bytes},
                           {"weights_bytes", l.weights_bytes}});
  json gpus_json = json::array();
  for (const auto& g : gpus)
    gpus_json.push_back({{"index", g.index},
                         {"source", source_name(g.source)},
                         {"name", g.name.empty() ? json() : json(g.name)},
                         {"total", g.total},
                         {"free", g.free},
                         {"layers", g.layers},
                         {"weights_bytes", g.weights_bytes},
                         {"kv_bytes", g.kv_bytes},
                         {"recurrent_bytes", g.recurrent_bytes},
                         {"left", g.left}});
  json vllm_json;
  if (vllm) {
    const auto& v = *vllm;
    auto opt = [](const auto& o) { return o ? json(*o) : json(); };
    vllm_json = {{"max_model_len", v.max_model_len},
                 {"block_size", v.block_size},
                 {"tensor_parallel_size", v.tensor_parallel},
                 {"pipeline_parallel_size", v.pipeline_parallel},
                 {"kv_cache_dtype", v.kv_cache_dtype},
                 {"page_bytes", v.page_bytes},
                 {"kv_cache_groups", v.groups},
                 {"layers_per_group", v.group_size},
                 {"request_bytes", v.request_bytes},
                 {"state_bytes", v.state_bytes},
                 {"mamba_cache_mode", v.mamba_cache_mode.empty() ? json() : json(v.mamba_cache_mode)},
                 {"available_kv_bytes", v.available},
                 {"available_estimated", v.available_estimated},
                 {"activation_estimate_bytes", v.available_estimated ? json(v.activation_estimate) : json()},
                 {"max_num_batched_tokens", v.max_num_batched_tokens},
                 {"max_num_seqs", v.max_num_seqs},
                 {"num_blocks", opt(v.num_blocks)},
                 {"gpu_kv_cache_tokens", opt(v.kv_tokens)},
                 {"max_concurrency", opt(v.max_concurrency)},
                 {"max_sequences", opt(v.max_sequences)},
                 {"estimated_max_model_len", opt(v.estimated_max_model_len)},
                 {"refusal", v.refusal.empty() ? json() : json(v.refusal)}};
  }
  return {{"engine", engine_name(engine)},
          {"context", context},
          {"slots", sequences},
          {"kv_unified", unified},
          {"flash_attn", flash_attn},
          {"ubatch", ubatch},
          {"cells_per_stream", cells},
          {"swa_cells_per_stream", swa_cells},
          {"kv_bytes", kv_bytes},
          {"recurrent_bytes", recurrent_bytes},
          {"weights_bytes", weights_bytes},
          {"host_bytes", host_bytes},
          {"gpus", gpus_json},
          {"tensor_split", tensor_split},
          {"fits", fits},
          {"max_context", max_context ? json(*max_context) : json()},
          {"max_slots", max_slots ? json(*max_slots) : json()},
          {"compute_bytes", nullptr},
          {"vllm", vllm_json},
          {"layers", layers_json}};
}

Plan plan_checkpoint(const std::vector<checkpoint::FileHeader>& files, const nlohmann::json& config,
                     const EngineSettings& engine, const std::vector<GpuFacts>& gpus) {
  if (engine.engine == Engine::vllm) {
    // vLLM reads config.json for the model's shape and the safetensors headers for its weights.
    if (config.is_null()) throw Error(Reason::usage, "vLLM is planned from config.json; none was read here");
    auto model = from_hf_config(config, "config.json");
    return plan_vllm(model, engine, place_weights(files, model.layers.size()), gpus);
  }
  auto model_file = std::find_if(files.begin(), files.end(), [](const checkpoint::FileHeader& f) {
    return f.format == checkpoint::Format::gguf && f.metadata.contains("general.architecture") &&
           f.metadata["general.architecture"] != "clip";
  });
  if (model_file == files.end())
    throw Error(Reason::usage, "llama.cpp is planned from a GGUF model; no GGUF model here");
  std::vector<checkpoint::FileHeader> parts;
  for (const auto& f : files)
    if (f.format == checkpoint::Format::gguf &&
        (!f.metadata.contains("general.architecture") ||
         f.metadata["general.architecture"] == model_file->metadata["general.architecture"]))
      parts.push_back(f);
  auto model = from_gguf(model_file->metadata, model_file->path);
  return plan(model, engine, weights_of(parts, model.layers.size()), gpus);
}

}  // namespace provkit::fit
