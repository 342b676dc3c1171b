#include <catch2/catch.hpp>

#include "provkit/fit/plan.hpp"

using namespace provkit;
using namespace provkit::fit;
using json = nlohmann::json;

// The expected bytes are what llama.cpp 0.7.0 allocated for the same shapes (the judge:
// tests/integration/hf-fetch/test_fit_llamacpp.py runs it on tiny GGUFs of these shapes).
namespace {
ModelFacts dense(std::uint32_t layers = 4) {  // 2 KV heads of 16
  ModelFacts m;
  m.architecture = "llama";
  m.context_length = 4096;
  m.layers.assign(layers, Layer{LayerKind::attention, false, 2, 16, 16});
  return m;
}
ModelFacts gemma3() {  // 7 layers, the 6th full, window 128, 2 KV heads of 32
  ModelFacts m;
  m.architecture = "gemma3";
  m.context_length = 8192;
  m.sliding_window = 128;
  for (int i = 0; i < 7; ++i) m.layers.push_back(Layer{LayerKind::attention, i % 6 < 5, 2, 32, 32});
  return m;
}
Plan run(const ModelFacts& m, const std::string& line, const std::vector<GpuFacts>& gpus = {}, const Weights& w = {}) {
  return plan(m, parse_engine_args(line), w, gpus);
}
std::string refusal(const ModelFacts& m, const std::string& line) {
  try {
    run(m, line);
  } catch (const Error& e) {
    CHECK(e.reason() == FitRefusal::engine_refuses);
    return e.what();
  }
  FAIL("not refused: " << line);
  return "";
}
}  // namespace

TEST_CASE("fit plan: context padded to 256, one stream per slot padded on its own", "[fit]") {
  auto p = run(dense(), "llama-completion -c 1000");
  CHECK(p.context == 1024);
  CHECK(p.layers[0].k_bytes == 65536);
  CHECK(p.layers[0].v_bytes == 65536);
  CHECK(p.kv_bytes == 8 * 65536);
  CHECK(run(dense(), "llama-completion -c 100").layers[0].k_bytes == 16384);
  CHECK(run(dense(), "llama-completion").layers[0].k_bytes == 262144);  // -c 0: the training context
  // -c 10000 -np 3: 3 streams of PAD(10000 / 3) = 3584 cells, more than PAD(10000).
  CHECK(run(dense(), "llama-completion -c 10000 -np 3").layers[0].k_bytes == 688128);
  CHECK(run(dense(), "llama-server -np 3 -c 2000").layers[0].k_bytes == 147456);
  CHECK(run(dense(), "llama-server -np 3 -c 2000 -kvu").layers[0].k_bytes == 131072);
  // llama-server's defaults: 4 slots, one unified cache of PAD(-c).
  auto server = run(dense(), "llama-server -c 10000");
  CHECK(server.sequences == 4);
  CHECK(server.unified);
  CHECK(server.layers[0].k_bytes == 655360);
  auto quantized = run(gemma3(), "llama-server -c 4096 -ctk q8_0 -ctv q4_0 -fa on --swa-full");
  CHECK(quantized.layers[0].k_bytes == 4096 * 64 / 32 * 34);
  CHECK(quantized.layers[0].v_bytes == 4096 * 64 / 32 * 18);
}

TEST_CASE("fit plan: sliding-window layers keep min(cells, window x slots + ubatch), padded", "[fit]") {
  auto p = run(gemma3(), "llama-completion -c 1000");
  CHECK(p.layers[5].k_bytes == 131072);  // full: 1024 cells x 64 x 2
  CHECK(p.layers[0].k_bytes == 98304);   // PAD(128 + 512) = 768 cells
  CHECK(p.swa_cells == 768);
  auto server = run(gemma3(), "llama-server -c 10000");
  CHECK(server.layers[5].k_bytes == 1310720);
  CHECK(server.layers[0].k_bytes == 131072);  // unified: 128 x 4 slots + 512 = 1024
  auto streams = run(gemma3(), "llama-completion -c 10000 -np 3 -ub 100");
  CHECK(streams.layers[5].k_bytes == 1376256);
  CHECK(streams.layers[0].k_bytes == 98304);  // 3 streams x PAD(128 + 100)
  CHECK(run(gemma3(), "llama-server -np 3 -c 5000 -kvu").layers[0].k_bytes == 131072);
  CHECK(run(gemma3(), "llama-completion -c 5000 --swa-full -fa off").layers[0].k_bytes == 655360);
}

TEST_CASE("fit plan: without flash attention V is as wide as the widest layer", "[fit]") {
  auto m = dense(2);
  m.layers[1].n_head_kv = 4;
  auto on = run(m, "llama-completion -c 256 -fa on");
  auto off = run(m, "llama-completion -c 256 -fa off");
  CHECK(on.layers[0].v_bytes == 256 * 32 * 2);
  CHECK(off.layers[0].v_bytes == 256 * 64 * 2);
  CHECK(off.layers[0].k_bytes == on.layers[0].k_bytes);
  CHECK_FALSE(off.flash_attn);
  CHECK(run(m, "llama-completion -c 256").flash_attn);  // auto: the cache is made for flash attention
}

TEST_CASE("fit plan: MLA K only, recurrent states F32 per slot, layers without KV", "[fit]") {
  ModelFacts mla = dense(3);
  mla.mla = true;
  for (auto& l : mla.layers) l = Layer{LayerKind::attention, false, 1, 96, 0};
  auto p = run(mla, "llama-completion -c 1000 -ctk q8_0 -ctv q8_0");
  CHECK(p.layers[0].k_bytes == 104448);
  CHECK(p.layers[0].v_bytes == 0);

  ModelFacts mamba = dense(3);
  for (auto& l : mamba.layers) l = Layer{LayerKind::recurrent};
  mamba.recurrent_r = 3 * 128;
  mamba.recurrent_s = 16 * 128;
  auto r = run(mamba, "llama-completion -c 1000 -np 3 -ctk q8_0 -ctv q8_0 -fa on");
  CHECK(r.layers[0].r_bytes == 4608);
  CHECK(r.layers[0].s_bytes == 24576);
  CHECK(r.kv_bytes == 0);
  CHECK(r.recurrent_bytes == 3 * (4608 + 24576));

  auto hybrid = dense(3);
  hybrid.layers[0] = Layer{LayerKind::recurrent};
  hybrid.layers[2] = Layer{LayerKind::none};
  hybrid.recurrent_r = 10;
  auto h = run(hybrid, "llama-completion -c 256");
  CHECK(h.layers[0].k_bytes == 0);
  CHECK(h.layers[0].r_bytes == 40);
  CHECK(h.layers[2].k_bytes == 0);
  CHECK(h.kv_bytes == 256 * 32 * 2 * 2);
}

TEST_CASE("fit plan: what llama.cpp refuses at context creation, with its reason", "[fit]") {
  CHECK_THAT(refusal(dense(), "llama-completion -ctv q8_0 -fa off"),
             Catch::Contains("quantized V cache requires flash_attn to be enabled"));
  CHECK_THAT(refusal(dense(), "llama-completion -ctk q8_0"),
             Catch::Contains("K cache type q8_0 with block size 32 does not divide n_embd_head_k=16"));
  ModelFacts mla = dense(1);
  mla.mla = true;
  mla.layers[0] = Layer{LayerKind::attention, false, 1, 96, 0};
  CHECK_THAT(refusal(mla, "llama-completion -ctk q8_0"),
             Catch::Contains("model does not support different K (q8_0) and V (f16) cache types"));
  CHECK_THAT(refusal(mla, "llama-completion -ctk q8_0 -ctv q8_0 -fa off"), Catch::Contains("quantized V cache"));
}

TEST_CASE("fit plan: layers to cards by -ngl and -ts; the output layer counts as one more", "[fit]") {
  std::vector<GpuFacts> two = {{1000000, 1000000}, {1000000, 1000000}};
  Weights w{{100, 100, 100, 100}, 50, 70};
  auto p = run(dense(), "llama-server -c 256 -ts 1,1", two, w);
  std::vector<std::int32_t> devices;
  for (const auto& l : p.layers) devices.push_back(l.device);
  CHECK(devices == std::vector<std::int32_t>{0, 0, 0, 1});  // 5 layers with the output: 0/5 .. 2/5 < 0.5
  CHECK(p.gpus[0].weights_bytes == 300);
  CHECK(p.gpus[1].weights_bytes == 150);  // layer 3 and the output
  CHECK(p.gpus[0].kv_bytes == 3 * 2 * 256 * 32 * 2);
  CHECK(p.host_bytes == 70);  // the input embeddings stay on the host
  CHECK(p.tensor_split == std::vector<double>{0.5, 0.5});

  auto partial = run(dense(), "llama-server -c 256 -ts 1,1 -ngl 2", two, w);
  devices.clear();
  for (const auto& l : partial.layers) devices.push_back(l.device);
  CHECK(devices == std::vector<std::int32_t>{-1, -1, 0, 1});
  CHECK(partial.host_bytes == 70 + 200 + 50 + 2 * 2 * 256 * 32 * 2);

  // No -ts: by each card's free memory.
  std::vector<GpuFacts> uneven = {{4000000, 3000000}, {4000000, 1000000}};
  auto by_free = run(dense(), "llama-server -c 256", uneven, w);
  CHECK(by_free.tensor_split == std::vector<double>{0.75, 0.25});
  CHECK(by_free.gpus[0].layers == 4);
  CHECK_THROWS_WITH(run(dense(), "llama-server -ts 1,1,1", two, w), "-ts names 3 cards, but 2 are given");
}

TEST_CASE("fit plan: fits, the largest context and the most slots", "[fit]") {
  // 4 layers x (K + V) x 64 bytes a cell, f16: 512 bytes a cell; 1000 bytes of weights on the card.
  Weights w{{250, 250, 250, 250}, 0, 0};
  std::vector<GpuFacts> card = {{1000 + 512 * 2048, 1000 + 512 * 2048}};
  auto p = run(dense(), "llama-completion -c 2048", card, w);
  CHECK(p.fits);
  CHECK(p.gpus[0].left == 0);
  CHECK(p.max_context == 2048);
  CHECK(p.max_slots == 1);
  auto more = run(dense(), "llama-completion -c 2049", card, w);
  CHECK_FALSE(more.fits);
  CHECK(more.gpus[0].left == -512 * 256);
  CHECK(more.max_context == 2048);
  auto slots = run(dense(), "llama-completion -c 512 -np 2", card, w);
  CHECK(slots.max_slots == 8);  // 256 cells a slot
  CHECK(slots.max_context == 2048);
  // Up to the training context (4096), or further when the line asks for more.
  std::vector<GpuFacts> big = {{1ull << 30, 1ull << 30}};
  CHECK(run(dense(), "llama-completion -c 512", big, w).max_context == 4096);
  CHECK(run(dense(), "llama-completion -c 8000", big, w).max_context == 8192);
  auto none = run(dense(), "llama-completion -c 512", {{100, 100}}, w);
  CHECK_FALSE(none.fits);
  CHECK(none.max_context == 0);
  CHECK(none.max_slots == 0);
  // No GPUs named: the figures alone.
  auto bare = run(dense(), "llama-completion -c 512");
  CHECK(bare.fits);
  CHECK_FALSE(bare.max_context);
  json j = p.to_json();
  CHECK(j["kv_bytes"] == 512 * 2048);
  CHECK(j["gpus"][0]["left"] == 0);
  CHECK(j["layers"][0]["device"] == 0);
  CHECK(bare.to_json()["layers"][0]["device"] == "host");
}

TEST_CASE("fit plan: --gpu-memory sizes, one per card", "[fit]") {
  auto cards = parse_gpu_memory("24G,97887MiB");
  REQUIRE(cards.size() == 2);
  CHECK(cards[1].free == 97887ull << 20);
  CHECK_THROWS_WITH(parse_gpu_memory("24G,,24G"), "wants sizes like 24G,24G, not '24G,,24G'");
  CHECK_THROWS(parse_gpu_memory("lots"));
}

TEST_CASE("fit plan: a card's source and name go into its row, and a half-full card counts as half", "[fit]") {
  Weights w{{250, 250, 250, 250}, 0, 0};
  const std::uint64_t need = 1000 + 512 * 2048;  // weights and the KV of -c 2048 on one card
  GpuFacts empty{.total = need, .free = need, .source = GpuSource::local, .name = "NVIDIA GeForce RTX 3090"};
  GpuFacts half = empty;
  half.free = need / 2;
  auto fits = run(dense(), "llama-completion -c 2048", {empty}, w);
  CHECK(fits.fits);
  auto short_of = run(dense(), "llama-completion -c 2048", {half}, w);
  CHECK_FALSE(short_of.fits);
  CHECK(short_of.gpus[0].left == static_cast<std::int64_t>(need / 2) - static_cast<std::int64_t>(need));
  CHECK(short_of.max_context < 2048);
  json j = short_of.to_json();
  CHECK(j["gpus"][0]["source"] == "local");
  CHECK(j["gpus"][0]["name"] == "NVIDIA GeForce RTX 3090");
  CHECK(j["gpus"][0]["free"] == need / 2);
  json named = run(dense(), "llama-completion -c 2048", parse_gpu_memory("2M"), w).to_json();
  CHECK(named["gpus"][0]["source"] == "gpu_memory");
  CHECK(named["gpus"][0]["name"].is_null());
}
