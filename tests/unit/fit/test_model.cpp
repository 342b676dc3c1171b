#include <catch2/catch.hpp>

#include "provkit/error.hpp"
#include "provkit/fit/model.hpp"

using namespace provkit;
using namespace provkit::fit;
using json = nlohmann::json;

namespace {
json base(const std::string& arch, std::uint32_t layers) {
  return {{"general.architecture", arch},
          {arch + ".block_count", layers},
          {arch + ".context_length", 4096},
          {arch + ".embedding_length", 64},
          {arch + ".attention.head_count", 4}};
}
std::vector<LayerKind> kinds(const ModelFacts& m) {
  std::vector<LayerKind> out;
  for (const auto& l : m.layers) out.push_back(l.kind);
  return out;
}
std::vector<bool> sliding(const ModelFacts& m) {
  std::vector<bool> out;
  for (const auto& l : m.layers) out.push_back(l.sliding);
  return out;
}
}  // namespace

TEST_CASE("fit model: head_count_kv per layer, the head size from the embedding", "[fit]") {
  json meta = base("llama", 4);
  meta["llama.attention.head_count_kv"] = {2, 2, 4, 0};
  meta["llama.attention.head_count_kv"][3] = 1;
  auto m = from_gguf(meta, "m.gguf");
  REQUIRE(m.layers.size() == 4);
  CHECK(m.layers[0].k_width() == 32);  // 2 heads of 64/4
  CHECK(m.layers[2].k_width() == 64);
  CHECK(m.layers[3].v_width() == 16);
  CHECK(m.context_length == 4096);
  CHECK_FALSE(m.mla);
  meta["llama.attention.head_count_kv"] = {2, 2};
  CHECK_THROWS_WITH(from_gguf(meta, "m.gguf"), Catch::Contains("2 values for 4 layers"));
}

TEST_CASE("fit model: sliding layers by the GGUF's pattern, else the architecture's default", "[fit]") {
  json meta = base("gemma3", 7);
  meta["gemma3.attention.head_count_kv"] = 2;
  meta["gemma3.attention.key_length"] = 32;
  meta["gemma3.attention.value_length"] = 32;
  meta["gemma3.attention.sliding_window"] = 128;
  auto m = from_gguf(meta, "m.gguf");  // gemma3: il % 6 < 5
  CHECK(m.sliding_window == 128);
  CHECK(sliding(m) == std::vector<bool>{true, true, true, true, true, false, true});
  meta["gemma3.attention.sliding_window_pattern"] = 2;
  CHECK(sliding(from_gguf(meta, "m.gguf")) == std::vector<bool>{true, false, true, false, true, false, true});
  meta["gemma3.attention.sliding_window_pattern"] = {false, true, false, false, false, false, true};
  CHECK(sliding(from_gguf(meta, "m.gguf")) == std::vector<bool>{false, true, false, false, false, false, true});
  json other = base("mystery", 2);
  other["mystery.attention.sliding_window"] = 64;
  CHECK_THROWS_WITH(from_gguf(other, "x.gguf"), Catch::Contains("default pattern"));
}

TEST_CASE("fit model: MLA keeps kv_lora_rank + rope dims, no V", "[fit]") {
  json meta = base("deepseek2", 3);
  meta["deepseek2.attention.head_count_kv"] = 1;
  meta["deepseek2.attention.kv_lora_rank"] = 512;
  meta["deepseek2.rope.dimension_count"] = 64;
  auto m = from_gguf(meta, "m.gguf");
  CHECK(m.mla);
  CHECK(m.layers[1].k_width() == 576);
  CHECK(m.layers[1].v_width() == 0);
}

TEST_CASE("fit model: recurrent layers and their F32 states; nextn layers keep nothing", "[fit]") {
  json mamba = base("mamba", 3);
  mamba["mamba.attention.head_count"] = 0;
  mamba["mamba.ssm.conv_kernel"] = 4;
  mamba["mamba.ssm.inner_size"] = 128;
  mamba["mamba.ssm.state_size"] = 16;
  auto m = from_gguf(mamba, "m.gguf");
  CHECK(kinds(m) == std::vector<LayerKind>(3, LayerKind::recurrent));
  CHECK(m.recurrent_r == 3 * 128);
  CHECK(m.recurrent_s == 16 * 128);

  json next = base("qwen3next", 9);
  next["qwen3next.attention.head_count_kv"] = 2;
  next["qwen3next.full_attention_interval"] = 4;
  next["qwen3next.ssm.conv_kernel"] = 4;
  next["qwen3next.ssm.inner_size"] = 256;
  next["qwen3next.ssm.state_size"] = 64;
  next["qwen3next.ssm.group_count"] = 2;
  next["qwen3next.nextn_predict_layers"] = 1;
  auto q = from_gguf(next, "q.gguf");
  using K = LayerKind;
  CHECK(kinds(q) == std::vector<K>{K::recurrent, K::recurrent, K::recurrent, K::attention, K::recurrent, K::recurrent,
                                   K::recurrent, K::attention, K::none});
  CHECK(q.recurrent_r == 3 * (256 + 2 * 2 * 64));

  json jamba = base("jamba", 3);  // a KV head count of 0 beside ssm.*: recurrent
  jamba["jamba.attention.head_count_kv"] = {0, 2, 0};
  jamba["jamba.ssm.conv_kernel"] = 4;
  jamba["jamba.ssm.inner_size"] = 128;
  jamba["jamba.ssm.state_size"] = 16;
  CHECK(kinds(from_gguf(jamba, "j.gguf")) == std::vector<K>{K::recurrent, K::attention, K::recurrent});
}

TEST_CASE("fit model: a fact it needs missing is invalid input naming the file", "[fit]") {
  json meta = base("llama", 2);
  meta.erase("llama.block_count");
  try {
    from_gguf(meta, "dir/m.gguf");
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).find("dir/m.gguf") != std::string::npos);
    CHECK(std::string(e.what()).find("llama.block_count is missing") != std::string::npos);
  }
  json no_heads = base("llama", 2);
  no_heads["llama.attention.head_count"] = 0;
  CHECK_THROWS_WITH(from_gguf(no_heads, "m.gguf"), Catch::Contains("no KV heads"));
}

TEST_CASE("fit weights: blk.N by layer, output and input apart", "[fit]") {
  checkpoint::FileHeader f;
  f.format = checkpoint::Format::gguf;
  auto tensor = [](std::string name, std::uint64_t bytes) {
    checkpoint::Tensor t;
    t.name = std::move(name);
    t.bytes = bytes;
    return t;
  };
  f.tensors = {tensor("token_embd.weight", 100), tensor("blk.0.attn_q.weight", 10), tensor("blk.1.ffn_up.weight", 20),
               tensor("blk.1.attn_k.weight", 5), tensor("output.weight", 7),        tensor("blk.9.x", 3)};
  auto w = weights_of({f}, 2);
  CHECK(w.layer_bytes == std::vector<std::uint64_t>{10, 25});
  CHECK(w.input_bytes == 100);
  CHECK(w.output_bytes == 10);  // output.weight and a blk.N past the layers
  CHECK(w.total() == 145);
}
