#include "provkit/fit/model.hpp"

#include <map>
#include <numeric>

#include "provkit/error.hpp"
#include "provkit/util/text.hpp"

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

namespace provkit::fit {

namespace {

struct ConfigReader {
  const nlohmann::json& c;
  const std::string& path;
  Error bad(const std::string& what) const { return input_error(path, 0, "cannot plan its memory: " + what); }
  bool has(const std::string& key) const { return c.contains(key) && !c[key].is_null(); }
  std::uint64_t number(const std::string& key, std::optional<std::uint64_t> fallback = std::nullopt) const {
    if (!has(key)) {
      if (fallback) return *fallback;
      throw bad(key + " is missing");
    }
    const auto& v = c[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > (1ll << 40))
      throw bad(key + " is not a whole number");
    return v.get<std::uint64_t>();
  }
};

// vllm/config/model.py _get_and_verify_max_len: max_position_embeddings scaled by the rope factor,
// except for the rope types that extend nothing here.
std::uint64_t derived_max_len(const ConfigReader& r) {
  std::uint64_t len = r.number("max_position_embeddings", 0);
  const char* keys[] = {"rope_scaling", "rope_parameters"};
  for (const char* key : keys) {
    if (!r.has(key) || !r.c[key].is_object()) continue;
    const auto& rope = r.c[key];
    std::string type = rope.contains("rope_type") && rope["rope_type"].is_string()
                           ? rope["rope_type"].get<std::string>()
                       : rope.contains("type") && rope["type"].is_string() ? rope["type"].get<std::string>()
                                                                           : "";
    if (type == "su" || type == "longrope" || type == "llama3" || type == "mrope" || type == "default" ||
        !rope.contains("factor") || !rope["factor"].is_number())
      break;
    if (type == "yarn" && rope.contains("original_max_position_embeddings") &&
        rope["original_max_position_embeddings"].is_number_integer())
      len = rope["original_max_position_embeddings"].get<std::uint64_t>();
    const double factor = rope["factor"].get<double>();
    if (factor > 0 && factor < 1e6) len = static_cast<std::uint64_t>(static_cast<double>(len) * factor);
    break;
  }
  return len;
}

std::uint32_t dtype_bytes_of(const nlohmann::json& c) {
  for (const char* key : {"torch_dtype", "dtype"})
    if (c.contains(key) && c[key].is_string()) {
      // vLLM's "auto" dtype: float32 checkpoints run in 16 bits (bfloat16 where the GPU has it).
      const auto v = c[key].get<std::string>();
      if (v == "float16" || v == "bfloat16" || v == "float32" || v == "half") return 2;
    }
  return 2;
}

}  // namespace

ModelFacts from_hf_config(const nlohmann::json& top, const std::string& path) {
  if (!top.is_object()) throw input_error(path, 0, "cannot plan its memory: config.json is not an object");
  // A multimodal wrapper nests the language model's facts; its own keys fill what the nested one lacks.
  nlohmann::json c = top;
  if (top.contains("text_config") && top["text_config"].is_object()) {
    c = top["text_config"];
    for (auto& [k, v] : top.items())
      if (!c.contains(k) && k != "text_config" && k != "vision_config") c[k] = v;
  }
  ConfigReader r{c, path};
  ModelFacts m;
  m.model_type = c.contains("model_type") && c["model_type"].is_string() ? c["model_type"].get<std::string>() : "";
  m.architecture = m.model_type;
  const auto n_layer = r.number("num_hidden_layers");
  if (n_layer == 0 || n_layer > 65536)
    throw r.bad("num_hidden_layers " + std::to_string(n_layer) + " is not a layer count");
  m.hidden = r.number("hidden_size");
  const auto heads = r.number("num_attention_heads");
  if (heads == 0 || heads > 65536) throw r.bad("num_attention_heads " + std::to_string(heads) + " is not a head count");
  m.heads = static_cast<std::uint32_t>(heads);
  const auto kv_heads = r.number("num_key_value_heads", heads);
  const auto head_dim = r.number("head_dim", m.hidden / heads);
  // Bounds past any model, so that the widths below stay 32-bit and their products 64-bit.
  if (kv_heads > 65536 || head_dim > 65536) throw r.bad("num_key_value_heads or head_dim past 65536");
  m.intermediate = r.number("intermediate_size", 0);
  if (r.has("moe_intermediate_size") && r.has("num_experts_per_tok"))
    m.intermediate = std::max(m.intermediate, r.number("moe_intermediate_size") * r.number("num_experts_per_tok"));
  m.vocab = r.number("vocab_size", 0);
  m.context_length = static_cast<std::uint32_t>(std::min<std::uint64_t>(derived_max_len(r), UINT32_MAX));
  m.dtype_bytes = dtype_bytes_of(c);

  // Each layer's kind (vLLM's model files: which layers hold a KV cache, which a recurrent state).
  std::vector<LayerKind> kinds(n_layer, LayerKind::attention);
  std::vector<bool> slides(n_layer, false);
  const bool gdn = m.model_type == "qwen3_next" || m.model_type.rfind("qwen3_5", 0) == 0;
  const bool nemotron_h = m.model_type == "nemotron_h", granite_h = m.model_type == "granitemoehybrid";
  if (nemotron_h) {
    if (!c.contains("hybrid_override_pattern") || !c["hybrid_override_pattern"].is_string())
      throw r.bad("hybrid_override_pattern is missing");
    const auto pattern = c["hybrid_override_pattern"].get<std::string>();
    if (pattern.size() != n_layer)
      throw r.bad("hybrid_override_pattern has " + std::to_string(pattern.size()) + " layers for " +
                  std::to_string(n_layer));
    for (std::size_t i = 0; i < n_layer; ++i)
      kinds[i] = pattern[i] == 'M' ? LayerKind::recurrent : pattern[i] == '*' ? LayerKind::attention : LayerKind::none;
  } else if (r.has("layer_types") && c["layer_types"].is_array()) {
    const auto& types = c["layer_types"];
    if (types.size() < n_layer)
      throw r.bad("layer_types has " + std::to_string(types.size()) + " entries for " + std::to_string(n_layer) +
                  " layers");
    for (std::size_t i = 0; i < n_layer; ++i) {
      const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
      if (t == "sliding_attention") slides[i] = true;
      else if (t == "linear_attention" || t == "mamba") kinds[i] = LayerKind::recurrent;
      else if (t != "full_attention" && t != "attention")
        throw Error(Reason::usage, path + ": layer " + std::to_string(i) + " is of type \"" + util::printable(t) +
                                       "\", which the vLLM planner does not size");
    }
  } else if (gdn) {
    // transformers' Qwen3NextConfig: linear attention unless (i + 1) is a multiple of the interval.
    const auto interval = r.number("full_attention_interval", 4);
    if (interval == 0) throw r.bad("full_attention_interval is 0");
    for (std::size_t i = 0; i < n_layer; ++i)
      if ((i + 1) % interval != 0) kinds[i] = LayerKind::recurrent;
  } else if (r.has("sliding_window")) {
    if (m.model_type == "gemma2") {
      for (std::size_t i = 0; i < n_layer; ++i) slides[i] = i % 2 == 0;
    } else if (m.model_type == "gemma3" || m.model_type == "gemma3_text" || m.model_type == "cohere2") {
      const auto pattern = r.number("sliding_window_pattern", m.model_type == "cohere2" ? 4 : 6);
      for (std::size_t i = 0; i < n_layer; ++i) slides[i] = pattern == 0 || (i + 1) % pattern != 0;
    } else if (!(c.contains("use_sliding_window") && c["use_sliding_window"] == false)) {
      slides.assign(n_layer, true);
    }
  }
  bool any_recurrent = false;
  for (auto k : kinds) any_recurrent = any_recurrent || k == LayerKind::recurrent;
  // Families whose state vLLM shapes by rules not transcribed here stay refused, never sized as attention.
  const bool other_recurrent = m.model_type.find("mamba") != std::string::npos || m.model_type == "jamba" ||
                               m.model_type == "falcon_h1" || m.model_type == "kimi_linear" ||
                               m.model_type == "bamba" || m.model_type.rfind("minimax", 0) == 0 ||
                               m.model_type.rfind("lfm2", 0) == 0 || m.model_type == "plamo2" ||
                               m.model_type == "zamba2";
  if (other_recurrent || (any_recurrent && !gdn && !nemotron_h && !granite_h))
    throw Error(Reason::usage, path + ": " + (m.model_type.empty() ? std::string("this model") : m.model_type) +
                                   " keeps a recurrent state in some layers whose shape the vLLM planner does not "
                                   "size (it sizes Qwen3-Next/Qwen3.5 gated delta nets and Nemotron-H/Granite 4.0-H "
                                   "Mamba2 layers)");
  if (any_recurrent) {
    auto& st = m.state;
    if (gdn) {
      st.kind = StateKind::gated_delta_net;
      st.k_heads = r.number("linear_num_key_heads");
      st.v_heads = r.number("linear_num_value_heads");
      st.k_dim = r.number("linear_key_head_dim");
      st.v_dim = r.number("linear_value_head_dim");
      st.conv_kernel = r.number("linear_conv_kernel_dim");
      if (m.model_type.rfind("qwen3_5", 0) == 0 && c.contains("mamba_ssm_dtype") && c["mamba_ssm_dtype"].is_string())
        st.ssm_dtype = c["mamba_ssm_dtype"].get<std::string>();
    } else if (nemotron_h) {
      st.kind = StateKind::mamba2;
      st.heads = r.number("mamba_num_heads");
      st.head_dim = r.number("mamba_head_dim");
      st.intermediate = st.heads * st.head_dim;
      st.groups = r.number("n_groups");
      st.state = r.number("ssm_state_size");
      st.conv_kernel = r.number("conv_kernel");
    } else {
      st.kind = StateKind::mamba2;
      st.heads = r.number("mamba_n_heads");
      st.head_dim = r.number("mamba_d_head");
      st.intermediate = r.number("mamba_expand") * m.hidden;
      st.groups = r.number("mamba_n_groups");
      st.state = r.number("mamba_d_state");
      st.conv_kernel = r.number("mamba_d_conv");
    }
    // Bounds past any model, so that a state's products stay 64-bit.
    for (auto v : {st.k_heads, st.v_heads, st.k_dim, st.v_dim, st.heads, st.head_dim, st.groups, st.state})
      if (v > 65536) throw r.bad("a recurrent state dimension past 65536");
    if (st.conv_kernel == 0 || st.conv_kernel > 1024) throw r.bad("conv kernel " + std::to_string(st.conv_kernel));
    if (st.intermediate > (1ull << 24)) throw r.bad("a Mamba intermediate size past 2^24");
  }
  bool any_sliding = false;
  for (bool s : slides) any_sliding = any_sliding || s;
  if (any_sliding) {
    const auto window = r.number("sliding_window");
    if (window == 0 || window > UINT32_MAX)
      throw r.bad("sliding_window " + std::to_string(window) + " is not a window");
    m.sliding_window = static_cast<std::uint32_t>(window);
  }

  m.mla = r.has("kv_lora_rank") && r.number("kv_lora_rank") > 0;
  const std::uint64_t latent = m.mla ? r.number("kv_lora_rank") + r.number("qk_rope_head_dim") : 0;
  if (latent > 65536) throw r.bad("kv_lora_rank + qk_rope_head_dim past 65536");
  if (!m.mla && (kv_heads == 0 || head_dim == 0)) throw r.bad("no KV heads or no head size");
  m.layers.resize(n_layer);
  for (std::size_t i = 0; i < n_layer; ++i)
    m.layers[i] = m.mla ? Layer{kinds[i], slides[i], 1, static_cast<std::uint32_t>(latent), 0}
                        : Layer{kinds[i], slides[i], static_cast<std::uint32_t>(kv_heads),
                                static_cast<std::uint32_t>(head_dim), static_cast<std::uint32_t>(head_dim)};
  return m;
}

}  // namespace provkit::fit
