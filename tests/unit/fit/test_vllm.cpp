// The vLLM planner judged by vLLM itself: numbers vLLM printed in public logs, with the model's
// config.json facts and the flags stated beside them. Where the log prints its own available KV memory
// ("Available KV cache memory: X GiB", or the refusal's "available KV cache memory (X GiB)") that figure
// is fed in, which isolates the transcribed rules from the profiling vLLM does: the tokens, concurrency
// and maximum length must then come out as vLLM printed them. X is printed to 0.01 GiB, so a figure
// that depends on it must lie between the planner's answers at X - 0.005 and X + 0.005 GiB; a figure
// that does not (the KV one request needs) must match to the digit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "provkit/fit/engine.hpp"
#include "provkit/fit/vllm.hpp"

using namespace provkit;
using namespace provkit::fit;
using nlohmann::json;

namespace {

constexpr double kGiB = 1073741824.0;

// What vLLM printed, and where (URL); the model's facts from its own config.json (URL).
struct LogCase {
  const char* what;
  const char* log_url;
  const char* config_url;
  json config;
  std::string line;
  std::vector<double> available_gib;     // per rank, as printed (empty: not used)
  std::optional<std::uint64_t> tokens;   // "GPU KV cache size: N tokens"
  const char* concurrency = nullptr;     // "Maximum concurrency for L tokens per request: X" (X)
  const char* needed_gib = nullptr;      // "(X GiB KV cache is needed"
  std::optional<std::uint64_t> max_len;  // "the estimated maximum model length is N"
};

std::vector<std::uint64_t> bytes_at(const std::vector<double>& gib, double delta) {
  std::vector<std::uint64_t> out;
  for (double g : gib) out.push_back(static_cast<std::uint64_t>(std::floor((g + delta) * kGiB)));
  return out;
}

VllmFigures figures(const LogCase& c, double delta) {
  auto model = from_hf_config(c.config, "config.json");
  return *plan_vllm(model, parse_engine_args(c.line), {}, {}, bytes_at(c.available_gib, delta)).vllm;
}

std::string two_decimals(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", x);
  return text;
}

const json kQwen3_14B = {{"model_type", "qwen3"},
                         {"num_hidden_layers", 40},
                         {"num_attention_heads", 40},
                         {"num_key_value_heads", 8},
                         {"head_dim", 128},
                         {"hidden_size", 5120},
                         {"max_position_embeddings", 40960},
                         {"torch_dtype", "bfloat16"}};
const json kQwen3Coder480B = {
    {"model_type", "qwen3_moe"},         {"num_hidden_layers", 62},  {"num_attention_heads", 96},
    {"num_key_value_heads", 8},          {"head_dim", 128},          {"hidden_size", 6144},
    {"max_position_embeddings", 262144}, {"torch_dtype", "bfloat16"}};
const json kDeepSeekV2Lite = {{"model_type", "deepseek_v2"},
                              {"num_hidden_layers", 27},
                              {"num_attention_heads", 16},
                              {"num_key_value_heads", 16},
                              {"hidden_size", 2048},
                              {"kv_lora_rank", 512},
                              {"qk_rope_head_dim", 64},
                              {"max_position_embeddings", 163840},
                              {"rope_scaling",
                               {{"type", "yarn"}, {"factor", 40}, {"original_max_position_embeddings", 4096}}},
                              {"torch_dtype", "bfloat16"}};

const std::vector<LogCase>& cases() {
  static const std::vector<LogCase> all = {
      {"Qwen3-14B, one GPU, bf16 KV, max_model_len 32768",
       "https://github.com/LMCache/LMCache/issues/1739",
       "https://huggingface.co/Qwen/Qwen3-14B/blob/main/config.json",
       kQwen3_14B,
       "vllm serve Qwen/Qwen3-14B --max-model-len 32768",
       {6.51},
       42656,
       "1.30"},
      {"Qwen3-Coder-480B-A35B-Instruct-FP8, -dp 8 (TP 1 per engine), its 262144 context refused",
       "https://github.com/vllm-project/recipes/pull/12",
       "https://huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8/blob/main/config.json",
       kQwen3Coder480B,
       "vllm serve /tmp/model/Qwen3-Coder-480B-A35B-Instruct-FP8 -dp=8 --enable-expert-parallel",
       {48.66},
       std::nullopt,
       nullptr,
       "62.00",
       205728},
      {"the same with --gpu-memory-utilization 0.95",
       "https://github.com/vllm-project/recipes/pull/12",
       "https://huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8/blob/main/config.json",
       kQwen3Coder480B,
       "vllm serve /tmp/model/Qwen3-Coder-480B-A35B-Instruct-FP8 -dp=8 --enable-expert-parallel "
       "--gpu-memory-utilization 0.95",
       {55.65},
       std::nullopt,
       nullptr,
       "62.00",
       235296},
      {"DeepSeek-V2-Lite-Chat (MLA), max_model_len 32768 refused",
       "https://github.com/vllm-project/vllm/issues/15871",
       "https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite-Chat/blob/main/config.json",
       kDeepSeekV2Lite,
       "vllm serve /home/user/DeepSeek-V2-Lite-Chat/ --max-model-len 32768 --enforce-eager",
       {0.93},
       std::nullopt,
       nullptr,
       "0.95",
       std::nullopt},
      {"DeepSeek-V2-Lite (MLA) on four L4s, TP 2 x PP 2 (14 + 13 layers), max_model_len 1024",
       "https://github.com/vllm-project/vllm/pull/20665",
       "https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json",
       kDeepSeekV2Lite,
       "vllm serve deepseek-ai/DeepSeek-V2-Lite -tp 2 -pp 2 --max-model-len 1024 --block-size 16",
       {12.13, 12.13, 11.33, 11.33},
       807792,
       "788.86"},
  };
  return all;
}

}  // namespace

TEST_CASE("fit vllm: the figures vLLM printed in public logs, from the logs' own inputs", "[fit][vllm]") {
  for (const auto& c : cases()) {
    INFO(c.what << "\n  log: " << c.log_url << "\n  config: " << c.config_url);
    const auto low = figures(c, -0.005), high = figures(c, 0.005), at = figures(c, 0);
    if (c.tokens) {
      CHECK(*low.kv_tokens <= *c.tokens);
      CHECK(*c.tokens <= *high.kv_tokens);
      // The range is a few blocks, never a guess: under 0.2% wide.
      CHECK(static_cast<double>(*high.kv_tokens - *low.kv_tokens) < 0.002 * static_cast<double>(*c.tokens));
    }
    if (c.concurrency) {
      CHECK(two_decimals(*low.max_concurrency) <= std::string(c.concurrency));
      CHECK(std::stod(c.concurrency) <= std::stod(two_decimals(*high.max_concurrency)));
    }
    if (c.needed_gib) {
      // The refusal's first figure depends on the rules alone: to the digit.
      CHECK(two_decimals(static_cast<double>(at.request_bytes) / kGiB) == c.needed_gib);
      CHECK_FALSE(at.refusal.empty());
      CHECK(at.refusal.find("(" + std::string(c.needed_gib) + " GiB KV cache is needed") != std::string::npos);
    }
    if (c.max_len) {
      CHECK(*low.estimated_max_model_len <= *c.max_len);
      CHECK(*c.max_len <= *high.estimated_max_model_len);
    }
  }
}

TEST_CASE("fit vllm: the Qwen3-14B log exactly, and what a max_model_len past it says", "[fit][vllm]") {
  // 6.51 GiB: 6989899694 bytes / (2 * 16 * 8 * 128 * 2 = 65536 a page) / 40 layers = 2666 blocks.
  const auto& c = cases().front();
  auto at = figures(c, 0);
  CHECK(at.page_bytes == 65536);
  CHECK(at.num_blocks == 2666u);
  CHECK(at.kv_tokens == 42656u);
  CHECK(two_decimals(*at.max_concurrency) == "1.30");
  CHECK(at.refusal.empty());
  // 40960 tokens need 6.25 GiB: it still fits; the model's own 40960 is the most it may ask for.
  auto model = from_hf_config(c.config, "config.json");
  auto p = plan_vllm(model, parse_engine_args("vllm serve x --max-model-len 40960"), {}, {}, {6989899694ull});
  CHECK(p.fits);
  CHECK(p.max_context == 40960u);
  try {
    plan_vllm(model, parse_engine_args("vllm serve x --max-model-len 50000"), {}, {}, {6989899694ull});
    FAIL("a max_model_len past the derived one was planned");
  } catch (const Error& e) {
    CHECK(e.reason() == FitRefusal::engine_refuses);
    CHECK(std::string(e.what()).find("greater than the derived max_model_len (40960") != std::string::npos);
  }
}

TEST_CASE("fit vllm: --max-model-len auto lowers the length to what every rank holds", "[fit][vllm]") {
  auto model = from_hf_config(kQwen3_14B, "config.json");
  auto line = parse_engine_args("vllm serve x --max-model-len auto");
  // 6.51 GiB holds the model's whole 40960; 3 GiB holds 3 GiB // (65536 x 40) = 1228 blocks of 16.
  auto whole = plan_vllm(model, line, {}, {}, {6989899694ull});
  CHECK(whole.fits);
  CHECK(whole.vllm->max_model_len == 40960u);
  auto lowered = plan_vllm(model, line, {}, {}, {3ull << 30});
  CHECK(lowered.fits);
  CHECK(lowered.vllm->max_model_len == 1228u * 16);
  CHECK(lowered.vllm->max_concurrency == Approx(1.0));
  auto none = plan_vllm(model, line, {}, {}, {1000});
  CHECK_FALSE(none.fits);
  CHECK(none.vllm->refusal.find("Cannot auto-fit max_model_len") != std::string::npos);
}

TEST_CASE("fit vllm: the profiling estimate against the one profile a log printed whole", "[fit][vllm]") {
  // vllm-project/vllm#10517 (v0, RTX 3090, Llama-3.1-8B-Instruct, bf16): total 23.58 GiB, utilization 0.90,
  // weights 14.9888 GiB; kv_cache_size 3.81 GiB at 20000 batched tokens, 2.89 GiB at 29000.
  auto model = from_hf_config({{"model_type", "llama"},
                               {"num_hidden_layers", 32},
                               {"num_attention_heads", 32},
                               {"num_key_value_heads", 8},
                               {"hidden_size", 4096},
                               {"intermediate_size", 14336},
                               {"max_position_embeddings", 131072}},
                              "config.json");
  for (auto [tokens, printed] : {std::pair<std::uint64_t, double>{20000, 3.81}, {29000, 2.89}}) {
    const double available = 23.58 * 0.90 - 14.9888 - static_cast<double>(activation_estimate(model, tokens, 1)) / kGiB;
    INFO(tokens << " tokens: estimated " << available << " GiB, vLLM profiled " << printed);
    // The estimate's error on this profile: 0.14 GiB short (its 512 MiB of non-torch memory against 0.35 GiB).
    CHECK(std::abs(available - printed) < 0.2);
    CHECK(available < printed);  // short, never over: a plan that fits here fits there
  }
}

TEST_CASE("fit vllm: pages per spec, KV heads replicated past TP, groups and padding layers", "[fit][vllm]") {
  // 8 KV heads over TP 16: one head a rank (max(1, 8 / 16)), never half.
  json dense = {{"model_type", "llama"},          {"num_hidden_layers", 4}, {"num_attention_heads", 64},
                {"num_key_value_heads", 8},       {"head_dim", 128},        {"hidden_size", 8192},
                {"max_position_embeddings", 4096}};
  auto m = from_hf_config(dense, "config.json");
  CHECK(plan_vllm(m, parse_engine_args("vllm serve x -tp 16"), {}, {}).vllm->page_bytes == 2 * 16 * 1 * 128 * 2);
  CHECK(plan_vllm(m, parse_engine_args("vllm serve x -tp 2"), {}, {}).vllm->page_bytes == 2 * 16 * 4 * 128 * 2);
  CHECK(plan_vllm(m, parse_engine_args("vllm serve x --kv-cache-dtype fp8"), {}, {}).vllm->page_bytes ==
        2 * 16 * 8 * 128 * 1);
  // Per-token-head scales: 2 * block * heads * 4 bytes more.
  CHECK(plan_vllm(m, parse_engine_args("vllm serve x --kv-cache-dtype int8_per_token_head"), {}, {}).vllm->page_bytes ==
        2 * 16 * 8 * 128 + 2 * 16 * 8 * 4);
  CHECK_THROWS_AS(plan_vllm(m, parse_engine_args("vllm serve x -tp 3"), {}, {}), Error);  // 64 heads / 3

  // MLA: one latent, not split by TP; fp8_ds_mla 656 bytes a token; its default block (FlashMLA) 64.
  auto mla = from_hf_config(kDeepSeekV2Lite, "config.json");
  CHECK(mla.context_length == 163840);  // yarn: 4096 * 40
  CHECK(plan_vllm(mla, parse_engine_args("vllm serve x -tp 8"), {}, {}).vllm->page_bytes == 64 * 576 * 2);
  CHECK(plan_vllm(mla, parse_engine_args("vllm serve x --kv-cache-dtype fp8_ds_mla"), {}, {}).vllm->page_bytes ==
        64 * 656);
  CHECK_THROWS_AS(plan_vllm(m, parse_engine_args("vllm serve x --kv-cache-dtype fp8_ds_mla"), {}, {}), Error);

  // Gemma 3 27B: 52 sliding + 10 full layers: groups of 10, 6 sliding groups (8 padding layers), 7 in all.
  json gemma = {{"model_type", "gemma3"},
                {"text_config",
                 {{"model_type", "gemma3_text"},
                  {"num_hidden_layers", 62},
                  {"num_attention_heads", 32},
                  {"num_key_value_heads", 16},
                  {"head_dim", 128},
                  {"hidden_size", 5376},
                  {"sliding_window", 1024},
                  {"max_position_embeddings", 131072}}},
                {"torch_dtype", "bfloat16"}};
  auto g = from_hf_config(gemma, "config.json");
  int sliding = 0;
  for (const auto& l : g.layers) sliding += l.sliding;
  CHECK(sliding == 52);
  CHECK_FALSE(g.layers[5].sliding);  // (5 + 1) % 6 == 0: full
  const std::uint64_t page = 2 * 16 * 16 * 128 * 2;
  auto v = *plan_vllm(g, parse_engine_args("vllm serve x --max-model-len 32768 --max-num-batched-tokens 2048"), {}, {},
                      {page * 10 * 7 * 100})
                .vllm;
  CHECK(v.groups == 7);
  CHECK(v.group_size == 10);
  CHECK(v.num_blocks == 700u);          // available // page // 10
  CHECK(v.kv_tokens == 700u / 7 * 16);  // blocks per group times the block
  // One request: 2048 pages of the full group, cdiv(1023 + 2048, 16) + 1 = 193 of each sliding one.
  CHECK(v.request_bytes == 10 * page * (2048 + 6 * 193));
  CHECK(*v.max_concurrency == Approx(700.0 / (2048 + 6 * 193)));

  // gpt-oss: layer_types alternate, 18 + 18: 2 groups of 18, no padding.
  json oss = {{"model_type", "gpt_oss"},
              {"num_hidden_layers", 36},
              {"num_attention_heads", 64},
              {"num_key_value_heads", 8},
              {"head_dim", 64},
              {"hidden_size", 2880},
              {"sliding_window", 128},
              {"max_position_embeddings", 131072}};
  oss["layer_types"] = json::array();
  for (int i = 0; i < 36; ++i) oss["layer_types"].push_back(i % 2 ? "full_attention" : "sliding_attention");
  auto ov = *plan_vllm(from_hf_config(oss, "config.json"), parse_engine_args("vllm serve x"), {}, {}).vllm;
  CHECK(ov.groups == 2);
  CHECK(ov.group_size == 18);

  // Gemma 2: even layers slide, 21 + 21 of 42.
  json gemma2 = {{"model_type", "gemma2"},    {"num_hidden_layers", 42},
                 {"num_attention_heads", 16}, {"num_key_value_heads", 8},
                 {"head_dim", 256},           {"hidden_size", 3584},
                 {"sliding_window", 4096},    {"max_position_embeddings", 8192}};
  auto g2 = from_hf_config(gemma2, "config.json");
  CHECK(g2.layers[0].sliding);
  CHECK_FALSE(g2.layers[1].sliding);

  // A hybrid without its state's facts is refused, not sized as attention.
  CHECK_THROWS_AS(from_hf_config({{"model_type", "qwen3_next"},
                                  {"num_hidden_layers", 48},
                                  {"num_attention_heads", 16},
                                  {"hidden_size", 2048}},
                                 "config.json"),
                  Error);
}

TEST_CASE("fit vllm: pipeline stages as get_pp_indices splits them, weights by stage and rank", "[fit][vllm]") {
  CHECK(pp_layers(27, 0, 2) == std::pair<std::size_t, std::size_t>{0, 14});
  CHECK(pp_layers(27, 1, 2) == std::pair<std::size_t, std::size_t>{14, 27});
  // 10 over 4: [2, 3, 3, 2]: the remainder to the stages before the last, from the back.
  CHECK(pp_layers(10, 0, 4).second == 2);
  CHECK(pp_layers(10, 1, 4) == std::pair<std::size_t, std::size_t>{2, 5});
  CHECK(pp_layers(10, 3, 4) == std::pair<std::size_t, std::size_t>{8, 10});

  checkpoint::FileHeader f;
  f.format = checkpoint::Format::safetensors;
  auto tensor = [&](const std::string& name, std::vector<std::uint64_t> shape, std::uint64_t bytes) {
    checkpoint::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.bytes = bytes;
    f.tensors.push_back(t);
  };
  tensor("model.embed_tokens.weight", {1000, 64}, 128000);
  tensor("model.layers.0.mlp.down_proj.weight", {64, 256}, 32768);
  tensor("model.layers.0.input_layernorm.weight", {64}, 128);
  tensor("model.layers.1.mlp.down_proj.weight", {64, 256}, 32768);
  tensor("model.layers.2.mlp.down_proj.weight", {64, 256}, 32768);  // past 2 layers: an MTP layer, not loaded
  tensor("lm_head.weight", {1000, 64}, 128000);
  auto w = place_weights({f}, 2);
  CHECK(w.layer_split == std::vector<std::uint64_t>{32768, 32768});
  CHECK(w.layer_whole == std::vector<std::uint64_t>{128, 0});
  CHECK(w.first_split == 128000);
  CHECK(w.last_split == 128000);

  json tiny = {{"model_type", "llama"},          {"num_hidden_layers", 2}, {"num_attention_heads", 4},
               {"num_key_value_heads", 2},       {"head_dim", 16},         {"hidden_size", 64},
               {"max_position_embeddings", 4096}};
  auto p = plan_vllm(
      from_hf_config(tiny, "config.json"), parse_engine_args("vllm serve x -tp 2 -pp 2"), w,
      {{1ull << 30, 1ull << 30}, {1ull << 30, 1ull << 30}, {1ull << 30, 1ull << 30}, {1ull << 30, 1ull << 30}});
  REQUIRE(p.gpus.size() == 4);
  // Stage 0 (ranks 0, 1): layer 0 and the embeddings, split in two, the norm whole on each.
  CHECK(p.gpus[0].weights_bytes == (32768 + 128000) / 2 + 128);
  CHECK(p.gpus[1].weights_bytes == p.gpus[0].weights_bytes);
  CHECK(p.gpus[2].weights_bytes == (32768 + 128000) / 2);
  CHECK(p.gpus[0].layers == 1);
  // The blocks are the fewest any rank holds (get_kv_cache_configs' min_num_blocks): here rank 2's, of the
  // second stage. A page: 2 * 16 * 1 head (2 over TP 2) * 16 * 2 bytes = 1024, one layer a stage.
  auto fewest = plan_vllm(from_hf_config(tiny, "config.json"),
                          parse_engine_args("vllm serve x -tp 2 -pp 2 --max-model-len 64"), w, {},
                          {100 * 1024, 100 * 1024, 40 * 1024, 100 * 1024});
  CHECK(fewest.vllm->page_bytes == 1024);
  CHECK(fewest.vllm->num_blocks == 40u);
  CHECK(fewest.vllm->kv_tokens == 40u * 16);
}

TEST_CASE("fit vllm: the operator's two 24 GiB cards, TP 2, 64k of a 32B-class FP8 model", "[fit][vllm]") {
  // Qwen2.5-32B's shape: 64 layers, 8 KV heads of 128, bf16 KV; ~16.6 GiB of FP8 weights a rank.
  json qwen = {{"model_type", "qwen2"},     {"num_hidden_layers", 64},
               {"num_attention_heads", 40}, {"num_key_value_heads", 8},
               {"hidden_size", 5120},       {"intermediate_size", 27648},
               {"vocab_size", 152064},      {"max_position_embeddings", 131072},
               {"torch_dtype", "bfloat16"}};
  auto m = from_hf_config(qwen, "config.json");
  PlacedWeights w;
  w.layer_split.assign(64, 500ull << 20);  // 32000 MiB of linear weights over the layers
  w.layer_whole.assign(64, 40ull << 10);
  w.first_split = w.last_split = 152064ull * 5120 * 2;  // bf16 embeddings and head, split by vocab
  const std::uint64_t card = 24ull << 30;
  auto p = plan_vllm(m, parse_engine_args("vllm serve org/model-FP8 -tp 2 --max-model-len 65536"), w,
                     {{card, card}, {card, card}});
  CHECK_FALSE(p.fits);
  REQUIRE(p.gpus.size() == 2);
  CHECK(p.gpus[0].left < 0);  // short on card 0 by the bytes a 64k request lacks
  // One 64k request a rank: 64 layers * 2 * 4 heads * 128 * 2 bytes * 65536 = 8 GiB.
  CHECK(p.vllm->request_bytes == 8ull << 30);
  CHECK(p.vllm->refusal.find("estimated maximum model length is " + std::to_string(*p.vllm->estimated_max_model_len)) !=
        std::string::npos);
  // The largest context that fits, fits; one block (16 tokens) more does not.
  REQUIRE(p.max_context);
  CHECK(*p.max_context > 0);
  CHECK(*p.max_context < 65536);
  auto at = plan_vllm(m, parse_engine_args("vllm serve x -tp 2 --max-model-len " + std::to_string(*p.max_context)), w,
                      {{card, card}, {card, card}});
  CHECK(at.fits);
  auto past = plan_vllm(m,
                        parse_engine_args("vllm serve x -tp 2 --max-model-len " +
                                          std::to_string(*p.max_context / 16 * 16 + 16)),
                        w, {{card, card}, {card, card}});
  CHECK_FALSE(past.fits);
}

TEST_CASE("fit vllm: hostile sizes are refused or do not fit, never wrap into a fit", "[fit][vllm]") {
  json big = {{"model_type", "llama"},          {"num_hidden_layers", 2},   {"num_attention_heads", 4},
              {"num_key_value_heads", 4},       {"head_dim", 4294967296ll}, {"hidden_size", 64},
              {"max_position_embeddings", 4096}};
  CHECK_THROWS_AS(from_hf_config(big, "config.json"), Error);  // a head past 65536: not a model
  big["head_dim"] = 65536;
  big["num_key_value_heads"] = 65536;
  big["num_attention_heads"] = 65536;
  big["max_position_embeddings"] = 1ll << 40;
  auto m = from_hf_config(big, "config.json");
  // 2^32 - 1 tokens a block of 65536 heads of 65536: products past 2^64, held there: does not fit 1 TB.
  auto p = plan_vllm(m, parse_engine_args("vllm serve x --block-size 4294967295 --max-model-len 4294967295"), {}, {},
                     {1ull << 40});
  CHECK_FALSE(p.fits);
  CHECK(p.vllm->num_blocks == 0u);
  CHECK(p.vllm->request_bytes == UINT64_MAX);
  auto cards = plan_vllm(m, parse_engine_args("vllm serve x --max-model-len 4294967295"), {},
                         {{1ull << 40, 1ull << 40}});
  CHECK_FALSE(cards.fits);
  CHECK(cards.gpus[0].left < 0);
}

namespace {

// Qwen3-Next-80B-A3B-Instruct's config.json facts (https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/
// main/config.json; Intel's int4 AutoRound quantization of it keeps the shape): 48 layers, every 4th full
// attention (2 KV heads of 256), the others gated delta nets of 16 key heads and 32 value heads of 128, conv
// kernel 4.
const json kQwen3Next80B = {{"model_type", "qwen3_next"},
                            {"num_hidden_layers", 48},
                            {"num_attention_heads", 16},
                            {"num_key_value_heads", 2},
                            {"head_dim", 256},
                            {"hidden_size", 2048},
                            {"full_attention_interval", 4},
                            {"linear_num_key_heads", 16},
                            {"linear_num_value_heads", 32},
                            {"linear_key_head_dim", 128},
                            {"linear_value_head_dim", 128},
                            {"linear_conv_kernel_dim", 4},
                            {"max_position_embeddings", 262144},
                            {"torch_dtype", "bfloat16"}};

// A Nemotron-H-shaped model (nemotron_h: hybrid_override_pattern, M a Mamba2 layer, * attention, - an MLP)
// with Nemotron-H-8B's Mamba2 widths (128 heads of 64, 8 groups, state 128, conv 4) and attention (32 heads,
// 8 KV heads of 128), 8 layers.
json nemotron_h(const std::string& pattern) {
  return {{"model_type", "nemotron_h"},
          {"num_hidden_layers", pattern.size()},
          {"hybrid_override_pattern", pattern},
          {"num_attention_heads", 32},
          {"num_key_value_heads", 8},
          {"head_dim", 128},
          {"hidden_size", 4096},
          {"mamba_num_heads", 128},
          {"mamba_head_dim", 64},
          {"n_groups", 8},
          {"ssm_state_size", 128},
          {"conv_kernel", 4},
          {"max_position_embeddings", 8192},
          {"torch_dtype", "bfloat16"}};
}

VllmFigures hybrid_figures(const json& config, const std::string& line, std::vector<std::uint64_t> profiled = {}) {
  return *plan_vllm(from_hf_config(config, "config.json"), parse_engine_args(line), {}, {}, profiled).vllm;
}

}  // namespace

TEST_CASE("fit vllm: a Qwen3-Next log (gated delta net hybrid), its block, tokens and concurrency", "[fit][vllm]") {
  // https://github.com/vllm-project/vllm/issues/26646 (vLLM of 2025-10, the v0.11 line): Qwen3-Next-80B-A3B
  // int4 AutoRound, `--tensor-parallel-size 2 --max-model-len 215040 --gpu-memory-utilization 0.95 --dtype
  // float16 --max-num-seqs 2 --kv-cache-dtype fp8_e5m2`, printed "GPU KV cache size: 90,048 tokens" and
  // "Maximum concurrency for 215,040 tokens per request: 1.66x" (it failed later, in a Triton kernel). Its
  // "Available KV cache memory" line is not in the public excerpt, so the blocks are what the two lines imply.
  //
  // By vLLM's rules, per rank: a GDN state is conv 3 x (128*16*2 + 128*32) / 2 = 3 x 4096 fp16 (24576 bytes)
  // plus temporal 32/2 x 128 x 128 fp16 (524288), 548864 bytes; an attention token is 1 KV head (2 / 2) x
  // (256 + 256) x 1 byte (fp8) = 512 bytes; the block 16 * cdiv(548864, 16 * 512) = 1072 tokens, whose page
  // (548864) equals the state's. 36 GDN + 12 attention layers: groups of 12, 3 state groups and 1 attention
  // group. "GPU KV cache size" = blocks // 4 * 1072 = 90048 gives 336..339 blocks; one request needs
  // cdiv(215040, 1072) = 201 attention blocks + 1 state block per state group = 204, so "1.66x" is 338 or
  // 339 blocks. With bf16 KV the block would be 544, of which 90048 is no multiple.
  const std::string line =
      "vllm serve /mnt/nfs-share/LLM/Qwen3-Next-80B-A3B-Instruct-int4-mixed-AutoRound/ --host 0.0.0.0 --port "
      "30000 --tensor-parallel-size 2 --served-model-name Qwen3-30B --max-model-len 215040 "
      "--gpu-memory-utilization 0.95 --dtype float16 --max-num-seqs 2 --tool-call-parser hermes "
      "--enable-auto-tool-choice --enable-expert-parallel --generation-config auto --kv-cache-dtype fp8_e5m2";
  const auto plain = hybrid_figures(kQwen3Next80B, line);
  CHECK(plain.block_size == 1072);
  CHECK(plain.page_bytes == 548864);
  CHECK(plain.state_bytes == 548864);
  CHECK(plain.groups == 4);
  CHECK(plain.group_size == 12);
  // One 215040 request: 12 layers x 548864 x 204 blocks.
  CHECK(plain.request_bytes == 12ull * 548864 * 204);

  std::vector<std::string> concurrency_at_90048;
  for (std::uint64_t blocks = 330; blocks < 345; ++blocks) {
    // Available memory for exactly `blocks` blocks of 12 layers, and a page short of one more.
    for (std::uint64_t spare : {0ull, 548864ull * 12 - 1}) {
      const auto v = hybrid_figures(kQwen3Next80B, line, {blocks * 12 * 548864 + spare, blocks * 12 * 548864 + spare});
      CHECK(v.num_blocks == blocks);
      if (v.kv_tokens == 90048u) concurrency_at_90048.push_back(two_decimals(*v.max_concurrency));
    }
  }
  // 336..339 blocks print 90,048 tokens, and two of them the log's 1.66x.
  REQUIRE(concurrency_at_90048.size() == 8);
  CHECK(std::count(concurrency_at_90048.begin(), concurrency_at_90048.end(), "1.66") == 4);

  // The same line in bf16: the block 16 * cdiv(548864, 16 * 1024) = 544, the state padded to its page.
  auto bf16 = line;
  bf16.replace(bf16.find("fp8_e5m2"), 8, "auto");
  const auto b = hybrid_figures(kQwen3Next80B, bf16, {544ull * 1024 * 12 * 1000, 544ull * 1024 * 12 * 1000});
  CHECK(b.block_size == 544);
  CHECK(b.page_bytes == 544u * 1024);
  CHECK(b.kv_tokens == 1000u / 4 * 544);
  CHECK(b.kv_tokens != 90048u);
}

TEST_CASE("fit vllm: Qwen3-Next layers, state shapes over TP, dtypes and --block-size", "[fit][vllm]") {
  auto m = from_hf_config(kQwen3Next80B, "config.json");
  REQUIRE(m.layers.size() == 48);
  int recurrent = 0;
  for (const auto& l : m.layers) recurrent += l.kind == LayerKind::recurrent;
  CHECK(recurrent == 36);
  CHECK(m.layers[3].kind == LayerKind::attention);  // (3 + 1) % 4 == 0
  CHECK(m.layers[0].kind == LayerKind::recurrent);
  CHECK(m.state.kind == StateKind::gated_delta_net);

  // TP 1, bf16: conv 3 x 8192 x 2 = 49152, temporal 32 x 128 x 128 x 2 = 1048576; a token 2 x 512 x 2 = 2048
  // bytes; block 16 * cdiv(1097728, 32768) = 16 * 34 = 544.
  auto one = hybrid_figures(kQwen3Next80B, "vllm serve x --max-model-len 4096");
  CHECK(one.state_bytes == 49152 + 1048576);
  CHECK(one.block_size == 544);
  CHECK(one.page_bytes == 544u * 2048);
  // --mamba-ssm-cache-dtype float32 doubles the temporal state: 2146304 bytes, 16 * cdiv(2146304, 32768) =
  // 16 * 66 = 1056 tokens.
  auto f32 = hybrid_figures(kQwen3Next80B, "vllm serve x --max-model-len 4096 --mamba-ssm-cache-dtype float32");
  CHECK(f32.state_bytes == 49152 + 2097152);
  CHECK(f32.block_size == 1056);
  // Qwen3.5 configs name mamba_ssm_dtype: float32, which the flag's "auto" follows.
  json qwen35 = kQwen3Next80B;
  qwen35["model_type"] = "qwen3_5_text";
  qwen35["mamba_ssm_dtype"] = "float32";
  CHECK(hybrid_figures(qwen35, "vllm serve x --max-model-len 4096").state_bytes == 49152 + 2097152);
  CHECK(hybrid_figures(qwen35, "vllm serve x --max-model-len 4096 --mamba-ssm-cache-dtype float16").state_bytes ==
        49152 + 1048576);
  // A --block-size above the least one is kept, the state padded to its page; one below it is raised.
  CHECK(hybrid_figures(kQwen3Next80B, "vllm serve x --max-model-len 4096 --block-size 1024").block_size == 1024);
  CHECK(hybrid_figures(kQwen3Next80B, "vllm serve x --max-model-len 4096 --block-size 64").block_size == 544);
  // TP that does not divide the value heads (32 over 64) is what vLLM's divide() asserts against.
  CHECK_THROWS_AS(hybrid_figures(kQwen3Next80B, "vllm serve x -tp 3"), Error);  // 16 heads over 3
  json wide = kQwen3Next80B;
  wide["num_attention_heads"] = 64;
  CHECK_THROWS_AS(hybrid_figures(wide, "vllm serve x -tp 64"), Error);  // 32 value heads over 64
  // The rows: a recurrent layer's bytes are state (conv, then temporal and padding), an attention layer's K/V.
  auto p = plan_vllm(m, parse_engine_args("vllm serve x --max-model-len 4096"), {}, {}, {544ull * 2048 * 12 * 10});
  REQUIRE(p.layers.size() == 48);
  CHECK(p.layers[0].k_bytes == 0);
  CHECK(p.layers[0].r_bytes == 10u * 49152);
  CHECK(p.layers[0].r_bytes + p.layers[0].s_bytes == 10u * 544 * 2048);
  CHECK(p.layers[3].k_bytes == 10u * 544 * 2048 / 2);
  CHECK(p.layers[3].r_bytes == 0);
}

TEST_CASE("fit vllm: Nemotron-H's Mamba2 state, its groups over TP, layers without a cache", "[fit][vllm]") {
  // 6 Mamba2 layers, 2 attention, 2 MLP: groups of 2 (6 < 1.5 x 2 is false), 3 state groups + 1 attention.
  const auto config = nemotron_h("M-M*MM-M*M");
  auto m = from_hf_config(config, "config.json");
  CHECK(m.state.kind == StateKind::mamba2);
  CHECK(m.state.intermediate == 128 * 64);
  CHECK(m.layers[1].kind == LayerKind::none);
  CHECK(m.layers[3].kind == LayerKind::attention);
  // TP 1, bf16: conv 3 x (8192 + 2 x 8 x 128) x 2 = 61440, temporal 128 x 64 x 128 x 2 = 2097152: 2158592;
  // a token 8 x 256 x 2 = 4096 bytes; block 16 * cdiv(2158592, 65536) = 16 * 33 = 528.
  auto v = hybrid_figures(config, "vllm serve x --max-model-len 8192", {528ull * 4096 * 2 * 100});
  CHECK(v.state_bytes == 61440 + 2097152);
  CHECK(v.block_size == 528);
  CHECK(v.page_bytes == 528u * 4096);
  CHECK(v.groups == 4);
  CHECK(v.group_size == 2);
  CHECK(v.num_blocks == 100u);
  CHECK(v.kv_tokens == 100u / 4 * 528);
  // One 8192 request: cdiv(8192, 528) = 16 attention blocks + 3 state blocks.
  CHECK(*v.max_concurrency == Approx(100.0 / 19));
  // Short requests: each holds one block of every group, a state in each state group: 100 // 4 at once.
  CHECK(v.max_sequences == 25u);
  // TP 16 widens the 8 groups to 16 (extra_groups_for_head_shards): conv 3 x (8192 + 2 x 16 x 128) / 16 x 2
  // = 4608, temporal 8 x 64 x 128 x 2 = 131072; KV heads max(1, 8 / 16) = 1.
  json wide = config;
  wide["num_attention_heads"] = 64;
  CHECK(hybrid_figures(wide, "vllm serve x -tp 16 --max-model-len 8192").state_bytes == 4608 + 131072);
  // TP 3 divides neither the heads nor the conv dimension: vLLM's divide() asserts.
  json three = config;
  three["num_attention_heads"] = 48;
  CHECK_THROWS_AS(hybrid_figures(three, "vllm serve x -tp 3"), Error);
  // The MLP layers hold nothing.
  auto p = plan_vllm(m, parse_engine_args("vllm serve x --max-model-len 8192"), {}, {}, {528ull * 4096 * 2 * 100});
  CHECK(p.layers[1].k_bytes + p.layers[1].r_bytes + p.layers[1].s_bytes == 0);
  CHECK(p.layers[0].r_bytes + p.layers[0].s_bytes == 100u * 528 * 4096);
}

TEST_CASE("fit vllm: Granite 4.0-H's layer_types, and the hybrids vLLM sizes by rules not transcribed", "[fit][vllm]") {
  json granite = {{"model_type", "granitemoehybrid"},
                  {"num_hidden_layers", 4},
                  {"num_attention_heads", 32},
                  {"num_key_value_heads", 8},
                  {"hidden_size", 4096},
                  {"layer_types", {"mamba", "mamba", "mamba", "attention"}},
                  {"mamba_n_heads", 128},
                  {"mamba_d_head", 64},
                  {"mamba_n_groups", 1},
                  {"mamba_d_state", 128},
                  {"mamba_d_conv", 4},
                  {"mamba_expand", 2},
                  {"max_position_embeddings", 131072}};
  auto m = from_hf_config(granite, "config.json");
  CHECK(m.layers[3].kind == LayerKind::attention);
  CHECK(m.layers[0].kind == LayerKind::recurrent);
  // conv 3 x (2 x 4096 + 2 x 1 x 128) x 2 = 50688, temporal 128 x 64 x 128 x 2 = 2097152; a token 8 x 256 x 2.
  auto v = hybrid_figures(granite, "vllm serve x --max-model-len 8192");
  CHECK(v.state_bytes == 50688 + 2097152);
  CHECK(v.block_size == 528);  // 16 * cdiv(2147840, 16 * 4096)
  // 1 group over TP 2 becomes 2: conv 3 x (8192 + 512) / 2 x 2.
  CHECK(hybrid_figures(granite, "vllm serve x -tp 2 --max-model-len 8192").state_bytes == 26112 + 1048576);

  // Refused with exit 2 naming why, never sized as attention.
  for (const char* type : {"jamba", "falcon_h1", "mamba2", "kimi_linear", "bamba"}) {
    json other = granite;
    other["model_type"] = type;
    INFO(type);
    try {
      from_hf_config(other, "config.json");
      FAIL("planned");
    } catch (const Error& e) {
      CHECK(e.reason() == Reason::usage);
      CHECK(std::string(e.what()).find("recurrent state") != std::string::npos);
    }
  }
  // Hostile state sizes: refused naming config.json, or a block past 2^32 tokens refused, never wrapped.
  for (const char* key : {"mamba_n_heads", "mamba_d_state", "mamba_d_conv"}) {
    json hostile = granite;
    hostile[key] = std::string(key) == "mamba_d_conv" ? 0 : 1 << 20;
    INFO(key);
    try {
      from_hf_config(hostile, "config.json");
      FAIL("planned");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("config.json") != std::string::npos);
    }
  }
  json huge = granite;
  huge["mamba_n_heads"] = 65536;
  huge["mamba_d_head"] = 65536;
  huge["mamba_d_state"] = 65536;
  huge["num_key_value_heads"] = 1;
  huge["num_attention_heads"] = 1;
  huge["hidden_size"] = 2;
  // A state of 2^49 bytes over 8-byte attention tokens: a block of 2^46 tokens.
  CHECK_THROWS_WITH(hybrid_figures(huge, "vllm serve x"), Catch::Matchers::Contains("past 2^32 tokens"));
  json unknown = granite;
  unknown["layer_types"] = {"mamba", "conv", "mamba", "attention"};
  CHECK_THROWS_AS(from_hf_config(unknown, "config.json"), Error);
  // What the transcription does not cover: prefix-caching state modes, speculative decoding on a hybrid.
  // Prefix caching on a Mamba2 hybrid is mode "all" (its state a block of every block's tokens).
  for (const char* more : {" --enable-prefix-caching", " --enable-prefix-caching --mamba-cache-mode all",
                           " --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":2}'"}) {
    INFO(more);
    try {
      hybrid_figures(granite, std::string("vllm serve x") + more);
      FAIL("planned");
    } catch (const Error& e) {
      CHECK(e.reason() == Reason::usage);
    }
  }
  // Without prefix caching the mode is none whatever --mamba-cache-mode says; align asked for with it is kept.
  CHECK(hybrid_figures(granite, "vllm serve x --mamba-cache-mode align --max-model-len 8192").mamba_cache_mode ==
        "none");
  const std::uint64_t page = 528 * 4096;
  auto align = hybrid_figures(granite,
                              "vllm serve x --enable-prefix-caching --mamba-cache-mode align --max-model-len 8192",
                              {page * 100});
  CHECK(align.mamba_cache_mode == "align");
  // 3 Mamba2 + 1 attention layers: groups of 1, 3 state groups. One 8192 request: cdiv(8192, 528) = 16
  // attention blocks + 2 blocks of each state group (align) = 22.
  CHECK(*align.max_concurrency == Approx(100.0 / 22));
  CHECK_THROWS_AS(parse_engine_args("vllm serve x --mamba-cache-dtype fp8"), Error);  // not a MambaDType
}

TEST_CASE("fit vllm: a Qwen3.6 log with prefix caching (mamba cache mode align), blocks and concurrency",
          "[fit][vllm]") {
  // https://github.com/noonghunna/club-3090/issues/612 and /issues/652 (vLLM v0.24.0, one RTX 5090):
  // Qwen3.6-35B-A3B NVFP4, non-default args max_model_len 131072, kv_cache_dtype fp8, enable_prefix_caching,
  // max_num_batched_tokens 8192, max_num_seqs 1, no speculative config. Printed "Available KV cache memory:
  // 5.98 GiB" / "GPU KV cache size: 567,978 tokens" / "Maximum concurrency for 131,072 tokens per request: 4.33x",
  // and 6.01 GiB / 569,878 / 4.35x. The model's facts (qwen3_5_moe, text_config): 40 layers, every 4th full
  // attention of 2 KV heads of 256, gated delta nets of 16 key and 32 value heads of 128, conv kernel 4,
  // mamba_ssm_dtype float32 (https://huggingface.co/Qwen/Qwen3.6-35B-A3B/blob/main/config.json, as other
  // public code transcribes it).
  //
  // By the rules: prefix caching on a gated delta net is mode align; a state is conv 3 x 8192 x 2 (49152) plus
  // temporal 32 x 128 x 128 x 4 (2097152) = 2146304 bytes; an fp8 token 2 x 512 = 1024; the block
  // 16 * cdiv(2146304, 16384) = 2096 tokens, its page the state's exactly. 30 GDN + 10 attention layers:
  // 3 state groups and 1 attention group of 10. One request: cdiv(131072, 2096) = 63 blocks + 2 a state group
  // (align) = 69; 5.98 GiB holds 299 blocks of 10 x 2146304 (4.33x), 6.01 GiB 300 (4.35x). With mode none
  // (1 a state group) it would be 66 blocks and 4.53x; with a bf16 temporal state a 1072 block and 2.32x.
  // v0.24 prints "GPU KV cache size" as int(concurrency x max_model_len) (_report_kv_cache_config; the commit the
  // planner's own line follows printed blocks // groups x block): 299 / 69 x 131072 = 567,978.67.
  // Qwen3-Next's widths, 40 layers, nested as the multimodal wrapper nests them.
  json text = kQwen3Next80B;
  text["model_type"] = "qwen3_5_moe_text";
  text["num_hidden_layers"] = 40;
  text["mamba_ssm_dtype"] = "float32";
  const json config = {{"model_type", "qwen3_5_moe"}, {"text_config", text}};
  const std::string line =
      "vllm serve ~/.cache/huggingface/qwen3.6-35b-a3b-nvfp4 --dtype bfloat16 --max-model-len 131072 "
      "--quantization modelopt --kv-cache-dtype fp8 --enable-prefix-caching --max-num-batched-tokens 8192 "
      "--max-num-seqs 1 --enable-chunked-prefill";
  struct Printed {
    double available_gib;
    std::uint64_t tokens;
    const char* concurrency;
  };
  for (const Printed& log : {Printed{5.98, 567978, "4.33"}, Printed{6.01, 569878, "4.35"}}) {
    INFO(log.available_gib << " GiB");
    auto at = [&](double delta) {
      return hybrid_figures(config, line, {static_cast<std::uint64_t>(std::floor((log.available_gib + delta) * kGiB))});
    };
    const auto low = at(-0.005), high = at(0.005);
    CHECK(low.mamba_cache_mode == "align");
    CHECK(low.block_size == 2096);
    CHECK(low.state_bytes == 2146304);
    CHECK(low.page_bytes == 2146304);
    CHECK(low.groups == 4);
    CHECK(low.request_bytes == 10ull * 2146304 * 69);
    CHECK(std::stod(two_decimals(*low.max_concurrency)) <= std::stod(log.concurrency));
    CHECK(std::stod(log.concurrency) <= std::stod(two_decimals(*high.max_concurrency)));
    // v0.24's tokens line from the planner's concurrency, against what it printed.
    const auto v024_tokens = [](const VllmFigures& v) {
      return static_cast<std::uint64_t>(*v.max_concurrency * 131072);
    };
    CHECK(v024_tokens(low) <= log.tokens);
    CHECK(log.tokens <= v024_tokens(high));
  }
  // The blocks exactly: 299 and 300 give the printed tokens to the token.
  for (auto [blocks, tokens] : {std::pair<std::uint64_t, std::uint64_t>{299, 567978}, {300, 569878}}) {
    const auto v = hybrid_figures(config, line, {blocks * 10 * 2146304});
    CHECK(v.num_blocks == blocks);
    CHECK(static_cast<std::uint64_t>(*v.max_concurrency * 131072) == tokens);
  }
  // Without prefix caching (v0.11's hybrids, or --no-enable-prefix-caching) one state block a request: 66.
  auto none = line;
  none.replace(none.find("--enable-prefix-caching"), 23, "--no-enable-prefix-caching");
  const auto v = hybrid_figures(config, none, {299ull * 10 * 2146304});
  CHECK(v.mamba_cache_mode == "none");
  CHECK(*v.max_concurrency == Approx(299.0 / 66));
}
