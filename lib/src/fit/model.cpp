#include "provkit/fit/model.hpp"

#include <map>
#include <numeric>

#include "provkit/error.hpp"

namespace provkit::fit {

namespace {

using json = nlohmann::json;

struct Reader {
  const json& meta;
  const std::string& arch;
  const std::string& path;

  Error bad(const std::string& what) const { return input_error(path, 0, "cannot plan its memory: " + what); }
  const json* find(const std::string& key) const {
    auto full = arch + "." + key;
    return meta.contains(full) ? &meta[full] : nullptr;
  }
  static bool whole(const json& v) {
    return v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= (1ll << 32) - 1;
  }
  std::uint32_t number(const std::string& key, std::optional<std::uint32_t> fallback = std::nullopt) const {
    const json* v = find(key);
    if (!v) {
      if (fallback) return *fallback;
      throw bad(arch + "." + key + " is missing");
    }
    if (!whole(*v)) throw bad(arch + "." + key + " is not a whole number");
    return v->get<std::uint32_t>();
  }
  // A scalar for every layer, or one value per layer.
  std::vector<std::uint32_t> per_layer(const std::string& key, std::size_t layers,
                                       std::optional<std::uint32_t> fallback) const {
    const json* v = find(key);
    if (v && v->is_array()) {
      if (v->size() != layers)
        throw bad(arch + "." + key + " has " + std::to_string(v->size()) + " values for " + std::to_string(layers) +
                  " layers");
      std::vector<std::uint32_t> out;
      for (const auto& x : *v) {
        if (!whole(x)) throw bad(arch + "." + key + " holds a value that is not a whole number");
        out.push_back(x.get<std::uint32_t>());
      }
      return out;
    }
    return std::vector<std::uint32_t>(layers, number(key, fallback));
  }
};

// llama-model.cpp's set_swa_pattern defaults, where the GGUF names no pattern.
std::optional<std::uint32_t> default_swa_pattern(const std::string& arch) {
  static const std::map<std::string, std::uint32_t> patterns = {{"gemma2", 2},
                                                                {"gemma3", 6},
                                                                {"cohere2", 4},
                                                                {"gpt-oss", 2}};
  auto it = patterns.find(arch);
  if (it == patterns.end()) return std::nullopt;
  return it->second;
}

}  // namespace

ModelFacts from_gguf(const json& meta, const std::string& path) {
  ModelFacts m;
  if (!meta.contains("general.architecture") || !meta["general.architecture"].is_string())
    throw input_error(path, 0, "cannot plan its memory: general.architecture is missing");
  m.architecture = meta["general.architecture"].get<std::string>();
  Reader r{meta, m.architecture, path};
  const std::uint32_t n_layer = r.number("block_count");
  if (n_layer == 0 || n_layer > 65536) throw r.bad("block_count " + std::to_string(n_layer) + " is not a layer count");
  m.context_length = r.number("context_length");
  const std::uint32_t n_embd = r.number("embedding_length");
  auto n_head = r.per_layer("attention.head_count", n_layer, std::uint32_t{0});
  // No head_count_kv: as many KV heads as heads.
  auto n_head_kv = r.find("attention.head_count_kv") ? r.per_layer("attention.head_count_kv", n_layer, std::nullopt)
                                                     : n_head;
  std::uint32_t head0 = 0;
  for (auto h : n_head) head0 = std::max(head0, h);
  const std::uint32_t default_head = head0 ? n_embd / head0 : 0;
  auto head_k = r.per_layer("attention.key_length", n_layer, default_head);
  auto head_v = r.per_layer("attention.value_length", n_layer, default_head);

  m.layers.resize(n_layer);
  for (std::uint32_t i = 0; i < n_layer; ++i)
    m.layers[i] = {LayerKind::attention, false, n_head_kv[i], head_k[i], head_v[i]};

  // Sliding-window layers: their own key/value lengths when given.
  m.sliding_window = r.number("attention.sliding_window", 0);
  if (m.sliding_window) {
    const json* pattern = r.find("attention.sliding_window_pattern");
    std::vector<bool> slides(n_layer, false);
    if (pattern && pattern->is_array()) {
      if (pattern->size() != n_layer)
        throw r.bad("sliding_window_pattern has " + std::to_string(pattern->size()) + " values for " +
                    std::to_string(n_layer) + " layers");
      for (std::uint32_t i = 0; i < n_layer; ++i) {
        const auto& x = (*pattern)[i];
        if (!x.is_boolean() && !Reader::whole(x))
          throw r.bad("sliding_window_pattern holds a value that is not a bool");
        slides[i] = x.is_boolean() ? x.get<bool>() : x.get<std::uint32_t>() != 0;
      }
    } else {
      std::optional<std::uint32_t> n = pattern ? std::optional(r.number("attention.sliding_window_pattern"))
                                               : default_swa_pattern(m.architecture);
      if (!n)
        throw r.bad(m.architecture +
                    " has a sliding window but no sliding_window_pattern, and its default pattern is not one this "
                    "planner knows");
      // llama_hparams::set_swa_pattern: 0 slides every layer; N: all but every Nth.
      for (std::uint32_t i = 0; i < n_layer; ++i) slides[i] = *n == 0 || i % *n < *n - 1;
    }
    auto swa_k = r.find("attention.key_length_swa") ? r.number("attention.key_length_swa") : 0;
    auto swa_v = r.find("attention.value_length_swa") ? r.number("attention.value_length_swa") : 0;
    for (std::uint32_t i = 0; i < n_layer; ++i) {
      if (!slides[i]) continue;
      m.layers[i].sliding = true;
      if (swa_k) m.layers[i].head_k = swa_k;
      if (swa_v) m.layers[i].head_v = swa_v;
    }
  }

  // MLA: one latent of kv_lora_rank + rope dim per cell, no V (llama-kv-cache.cpp with is_mla).
  if (const json* rank = r.find("attention.kv_lora_rank");
      rank && Reader::whole(*rank) && rank->get<std::uint32_t>() > 0) {
    m.mla = true;
    const std::uint32_t rope = r.number("rope.dimension_count");
    for (auto& l : m.layers) l = {LayerKind::attention, l.sliding, 1, rank->get<std::uint32_t>() + rope, 0};
  }

  // Recurrent layers and their states (llama-hparams.cpp n_embd_r / n_embd_s, Mamba's shapes).
  const bool has_ssm = r.find("ssm.conv_kernel") != nullptr;
  std::vector<bool> recurrent(n_layer, false);
  if (m.architecture == "mamba" || m.architecture == "mamba2") {
    recurrent.assign(n_layer, true);
  } else if (const json* interval = r.find("full_attention_interval"); interval) {
    const std::uint32_t n = r.number("full_attention_interval");
    if (n == 0) throw r.bad("full_attention_interval is 0");
    for (std::uint32_t i = 0; i < n_layer; ++i) recurrent[i] = (i + 1) % n != 0;
  } else if (const json* layers = r.find("recurrent_layers");
             layers && layers->is_array() && layers->size() == n_layer) {
    for (std::uint32_t i = 0; i < n_layer; ++i)
      recurrent[i] = (*layers)[i].is_boolean() ? (*layers)[i].get<bool>() : (*layers)[i] != 0;
  } else if (has_ssm) {
    for (std::uint32_t i = 0; i < n_layer; ++i) recurrent[i] = n_head_kv[i] == 0;
  }
  bool any_recurrent = false;
  for (std::uint32_t i = 0; i < n_layer; ++i)
    if (recurrent[i]) {
      m.layers[i].kind = LayerKind::recurrent;
      any_recurrent = true;
    }
  if (any_recurrent) {
    const std::uint64_t d_conv = r.number("ssm.conv_kernel"), d_inner = r.number("ssm.inner_size"),
                        d_state = r.number("ssm.state_size"), n_group = r.number("ssm.group_count", 0);
    m.recurrent_r = (d_conv > 0 ? d_conv - 1 : 0) * (d_inner + 2 * n_group * d_state);
    m.recurrent_s = d_state * d_inner;
  }

  // The last nextn_predict_layers (MTP) and shared_kv_layers keep nothing in the main context.
  std::uint32_t tail = r.number("nextn_predict_layers", 0);
  tail = std::max(tail, r.number("attention.shared_kv_layers", 0));
  if (tail > n_layer) throw r.bad("nextn/shared layers outnumber the " + std::to_string(n_layer) + " layers");
  for (std::uint32_t i = n_layer - tail; i < n_layer; ++i) m.layers[i].kind = LayerKind::none;
  for (std::uint32_t i = 0; i < n_layer; ++i)
    if (m.layers[i].kind == LayerKind::attention && m.layers[i].k_width() == 0)
      throw r.bad("layer " + std::to_string(i) + " has attention with no KV heads or no head size");
  return m;
}

std::uint64_t Weights::total() const {
  return std::accumulate(layer_bytes.begin(), layer_bytes.end(), output_bytes + input_bytes);
}

Weights weights_of(const std::vector<checkpoint::FileHeader>& files, std::size_t layers) {
  Weights w;
  w.layer_bytes.assign(layers, 0);
  for (const auto& f : files) {
    if (f.format != checkpoint::Format::gguf) continue;
    for (const auto& t : f.tensors) {
      if (t.name.rfind("token_embd", 0) == 0) {
        w.input_bytes += t.bytes;
        continue;
      }
      std::size_t layer = layers;
      if (t.name.rfind("blk.", 0) == 0) {
        std::size_t n = 0, at = 4;
        while (at < t.name.size() && t.name[at] >= '0' && t.name[at] <= '9' && n <= layers)
          n = n * 10 + static_cast<std::size_t>(t.name[at++] - '0');
        if (at > 4 && n < layers) layer = n;
      }
      (layer < layers ? w.layer_bytes[layer] : w.output_bytes) += t.bytes;
    }
  }
  return w;
}

}  // namespace provkit::fit
