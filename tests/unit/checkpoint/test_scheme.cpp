#include <catch2/catch.hpp>
#include <cstdint>

#include "provkit/checkpoint/scheme.hpp"
#include "provkit/error.hpp"

using namespace provkit;
using namespace provkit::checkpoint;
using json = nlohmann::json;

namespace {

struct Model {
  std::vector<Tensor> tensors;
  void add(std::string name, std::string dtype, std::vector<std::uint64_t> shape) {
    tensors.push_back({std::move(name), std::move(dtype), std::move(shape), 0, 0, 0});
  }
  std::vector<const Tensor*> refs() const {
    std::vector<const Tensor*> out;
    for (const auto& t : tensors) out.push_back(&t);
    return out;
  }
  void drop(const std::string& name) {
    std::erase_if(tensors, [&](const Tensor& t) { return t.name == name; });
  }
  void set(const std::string& name, std::string dtype, std::vector<std::uint64_t> shape = {}) {
    for (auto& t : tensors)
      if (t.name == name) {
        t.dtype = std::move(dtype);
        if (!shape.empty()) t.shape = std::move(shape);
      }
  }
};

// Two decoder layers with q_proj and down_proj, each module's weight stored by `linear`.
Model model(const std::function<void(Model&, const std::string&, std::vector<std::uint64_t>)>& linear) {
  Model m;
  m.add("model.embed_tokens.weight", "BF16", {1000, 256});
  for (int i = 0; i < 2; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    m.add(p + "input_layernorm.weight", "BF16", {256});
    linear(m, p + "self_attn.q_proj", {256, 256});
    linear(m, p + "mlp.down_proj", {256, 512});
  }
  m.add("model.norm.weight", "BF16", {256});
  m.add("lm_head.weight", "BF16", {1000, 256});
  return m;
}

auto fp8_block = [](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
  m.add(mod + ".weight", "F8_E4M3", s);
  m.add(mod + ".weight_scale_inv", "F32", {(s[0] + 127) / 128, (s[1] + 127) / 128});
};
const json kFp8 = {{"quantization_config",
                    {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"weight_block_size", {128, 128}}}}};

}  // namespace

TEST_CASE("fp8 with weight_block_size: a clean checkpoint has no findings", "[checkpoint]") {
  auto m = model(fp8_block);
  auto c = check_quantization(kFp8, json(), m.refs());
  CHECK(c.scheme == "fp8 (weight_block_size [128, 128])");
  CHECK(c.source == "config.json");
  CHECK(c.checked);
  CHECK(c.linear_modules == 5);  // four projections and lm_head
  CHECK(c.quantized_modules == 4);
  CHECK(c.findings.empty());
}

TEST_CASE("fp8: a planted BF16 linear weight, a missing scale and a wrong block scale are findings", "[checkpoint]") {
  auto m = model(fp8_block);
  m.set("model.layers.1.mlp.down_proj.weight", "BF16");
  m.drop("model.layers.1.mlp.down_proj.weight_scale_inv");
  m.drop("model.layers.0.self_attn.q_proj.weight_scale_inv");
  m.set("model.layers.0.mlp.down_proj.weight_scale_inv", "F32", {2, 2});
  auto c = check_quantization(kFp8, json(), m.refs());
  REQUIRE(c.findings.size() == 3);
  CHECK(c.findings[0].tensor == "model.layers.0.mlp.down_proj.weight_scale_inv");
  CHECK(c.findings[0].expected == "shape [2, 4]");
  CHECK(c.findings[1].tensor == "model.layers.0.self_attn.q_proj.weight");
  CHECK(c.findings[1].expected == "model.layers.0.self_attn.q_proj.weight_scale_inv as F32, BF16");
  CHECK_THAT(c.findings[1].why, Catch::Contains("needs its scale tensor"));
  CHECK(c.findings[2].tensor == "model.layers.1.mlp.down_proj.weight");
  CHECK(c.findings[2].dtype == "BF16");
  CHECK(c.findings[2].expected == "F8_E4M3");
  CHECK_THAT(c.findings[2].why, Catch::Contains("not in modules_to_not_convert"));
}

TEST_CASE("fp8: modules_to_not_convert excuses a BF16 layer, and a quantized excluded layer is a finding",
          "[checkpoint]") {
  auto m = model(fp8_block);
  m.set("model.layers.1.mlp.down_proj.weight", "BF16");
  m.drop("model.layers.1.mlp.down_proj.weight_scale_inv");
  json cfg = kFp8;
  cfg["quantization_config"]["modules_to_not_convert"] = {"model.layers.1.mlp", "model.layers.0.self_attn.q_proj"};
  auto c = check_quantization(cfg, json(), m.refs());
  REQUIRE(c.findings.size() == 1);
  CHECK(c.findings[0].tensor == "model.layers.0.self_attn.q_proj.weight");
  CHECK_THAT(c.findings[0].why, Catch::Contains("is in modules_to_not_convert"));
}

TEST_CASE("compressed-tensors: groups by format, ignore with re: patterns", "[checkpoint]") {
  auto m = model([](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
    m.add(mod + ".weight", "F8_E4M3", s);
    m.add(mod + ".weight_scale", "BF16", {s[0], 1});
  });
  m.add("model.layers.0.mlp.gate.weight", "BF16", {8, 256});  // a router
  m.add("model.layers.0.mlp.shared.weight", "BF16", {256, 256});
  json cfg = {
      {"quantization_config",
       {{"quant_method", "compressed-tensors"},
        {"format", "float-quantized"},
        {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", {{"num_bits", 8}, {"type", "float"}}}}}}},
        {"ignore", {"lm_head", "re:.*mlp\\.shared$"}}}}};
  auto c = check_quantization(cfg, json(), m.refs());
  CHECK(c.scheme == "compressed-tensors (float-quantized)");
  CHECK(c.findings.empty());
  cfg["quantization_config"]["ignore"] = {"lm_head"};
  c = check_quantization(cfg, json(), m.refs());
  REQUIRE(c.findings.size() == 1);
  CHECK(c.findings[0].tensor == "model.layers.0.mlp.shared.weight");
  CHECK_THAT(c.findings[0].why, Catch::Contains("(not in ignore)"));
  cfg["quantization_config"]["ignore"] = {"re:("};
  CHECK_THROWS_AS(check_quantization(cfg, json(), m.refs()), Error);
}

TEST_CASE("compressed-tensors nvfp4-pack-quantized wants weight_packed, weight_scale and weight_global_scale",
          "[checkpoint]") {
  auto m = model([](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
    m.add(mod + ".weight_packed", "U8", {s[0], s[1] / 2});
    m.add(mod + ".weight_scale", "F8_E4M3", {s[0], s[1] / 16});
    m.add(mod + ".weight_global_scale", "F32", {1});
  });
  json cfg = {
      {"quantization_config",
       {{"quant_method", "compressed-tensors"},
        {"format", "nvfp4-pack-quantized"},
        {"config_groups", {{"g", {{"targets", {"Linear"}}, {"weights", {{"num_bits", 4}, {"type", "float"}}}}}}},
        {"ignore", {"lm_head"}}}}};
  CHECK(check_quantization(cfg, json(), m.refs()).findings.empty());
  m.set("model.layers.0.mlp.down_proj.weight_scale", "F32");
  auto c = check_quantization(cfg, json(), m.refs());
  REQUIRE(c.findings.size() == 1);
  CHECK(c.findings[0].tensor == "model.layers.0.mlp.down_proj.weight_scale");
}

TEST_CASE("ModelOpt NVFP4 from hf_quant_config.json: an extra BF16 layer not in exclude_modules", "[checkpoint]") {
  auto m = model([](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
    m.add(mod + ".weight", "U8", {s[0], s[1] / 2});
    m.add(mod + ".weight_scale", "F8_E4M3", {s[0], s[1] / 16});
    m.add(mod + ".weight_scale_2", "F32", {});
    m.add(mod + ".input_scale", "F32", {});
  });
  m.add("model.layers.1.mlp.extra_proj.weight", "BF16", {256, 256});
  m.add("model.mtp.0.proj.weight", "BF16", {256, 256});
  json hq = {{"producer", {{"name", "modelopt"}}},
             {"quantization", {{"quant_algo", "NVFP4"}, {"exclude_modules", {"lm_head", "model.mtp*"}}}}};
  auto c = check_quantization(json::object(), hq, m.refs());
  CHECK(c.scheme == "modelopt NVFP4");
  CHECK(c.source == "hf_quant_config.json");
  REQUIRE(c.findings.size() == 1);
  CHECK(c.findings[0].tensor == "model.layers.1.mlp.extra_proj.weight");
  CHECK(c.findings[0].expected == "U8");
  CHECK_THAT(c.findings[0].why, Catch::Contains("not in exclude_modules"));
}

TEST_CASE("ModelOpt FP8 from config.json's quantization_config", "[checkpoint]") {
  auto m = model([](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
    m.add(mod + ".weight", "F8_E4M3", s);
    m.add(mod + ".weight_scale", "F32", {});
  });
  json cfg = {{"quantization_config", {{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", {"lm_head"}}}}};
  auto c = check_quantization(cfg, json(), m.refs());
  CHECK(c.scheme == "modelopt FP8");
  CHECK(c.findings.empty());
}

TEST_CASE("bitsandbytes 4-bit and GPTQ: quantized storage inside the blocks", "[checkpoint]") {
  auto bnb = model([](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
    m.add(mod + ".weight", "U8", {s[0] * s[1] / 2, 1});
    m.add(mod + ".weight.absmax", "F32", {s[0] * s[1] / 64});
    m.add(mod + ".weight.quant_state.bitsandbytes__nf4", "U8", {100});
  });
  json cfg = {{"quantization_config",
               {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}, {"bnb_4bit_quant_type", "nf4"}}}};
  auto c = check_quantization(cfg, json(), bnb.refs());
  CHECK(c.scheme == "bitsandbytes 4-bit");
  CHECK(c.findings.empty());
  bnb.drop("model.layers.0.mlp.down_proj.weight.absmax");
  CHECK(check_quantization(cfg, json(), bnb.refs()).findings.size() == 1);

  auto gptq = model([](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
    m.add(mod + ".qweight", "I32", {s[1] / 8, s[0]});
    m.add(mod + ".qzeros", "I32", {s[1] / 128, s[0] / 8});
    m.add(mod + ".scales", "F16", {s[1] / 128, s[0]});
    m.add(mod + ".g_idx", "I32", {s[1]});
  });
  json g = {{"quantization_config", {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}}}};
  c = check_quantization(g, json(), gptq.refs());
  CHECK(c.scheme == "gptq 4-bit");
  CHECK(c.findings.empty());
  // bits as Python may write it; bits no int holds, or not whole, refused (8.1e31 made an int was undefined).
  g["quantization_config"]["bits"] = 4.0;
  CHECK(check_quantization(g, json(), gptq.refs()).scheme == "gptq 4-bit");
  for (json bad : {json(8.11111e31), json(-1), json(0), json(4.5), json(65), json(UINT64_MAX)}) {
    INFO(bad.dump());
    json b = g;
    b["quantization_config"]["bits"] = bad;
    CHECK_THROWS_WITH(check_quantization(b, json(), gptq.refs()),
                      Catch::Contains("quantization_config.bits is not a number of bits (1 to 64)"));
  }
  g["quantization_config"]["bits"] = 4;
  gptq.add("model.layers.1.mlp.up_proj.weight", "F16", {512, 256});
  c = check_quantization(g, json(), gptq.refs());
  REQUIRE(c.findings.size() == 1);
  CHECK(c.findings[0].expected == "model.layers.1.mlp.up_proj.qweight as I32");
}

TEST_CASE("no quantization_config, or an unknown one: nothing is checked", "[checkpoint]") {
  auto m = model(fp8_block);
  auto none = check_quantization(json::object(), json(), m.refs());
  CHECK(none.scheme == "none");
  CHECK_FALSE(none.checked);
  auto other = check_quantization({{"quantization_config", {{"quant_method", "hqq"}}}}, json(), m.refs());
  CHECK(other.scheme == "hqq (not checked)");
  CHECK_FALSE(other.checked);
  CHECK(module_of("a.b.weight.absmax") == "a.b");
  CHECK(module_of("a.b.weight_scale") == "a.b");
}

TEST_CASE("compressed-tensors: ignore patterns run in linear time, and what the matcher cannot do is refused",
          "[checkpoint]") {
  auto m = model([](Model& m, const std::string& mod, std::vector<std::uint64_t> s) {
    m.add(mod + ".weight", "F8_E4M3", s);
    m.add(mod + ".weight_scale", "BF16", {s[0], 1});
  });
  // A linear module whose name is 400 KB of a's: std::regex never ended on (a|aa)*c, and .*x overflowed its
  // stack (SIGSEGV). The module is quantized, and neither pattern names it.
  const std::string long_module = std::string(400 * 1024, 'a');
  m.add(long_module + ".weight", "BF16", {256, 256});
  json cfg = {
      {"quantization_config",
       {{"quant_method", "compressed-tensors"},
        {"format", "float-quantized"},
        {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", {{"num_bits", 8}, {"type", "float"}}}}}}},
        {"ignore", {"lm_head", "re:(a|aa)*c", "re:.*x"}}}}};
  auto c = check_quantization(cfg, json(), m.refs());
  REQUIRE(c.findings.size() == 1);
  CHECK(c.findings[0].tensor == long_module + ".weight");
  // The same name matched by a pattern: excluded, so its BF16 weight is as the config says.
  cfg["quantization_config"]["ignore"] = {"lm_head", "re:(a|aa)*$"};
  CHECK(check_quantization(cfg, json(), m.refs()).findings.empty());
  // A backreference is valid Python but not linear: refused with the reason, naming the config.
  cfg["quantization_config"]["ignore"] = {R"(re:(a)\1)"};
  try {
    check_quantization(cfg, json(), m.refs(), "config.json");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK_THAT(e.what(), Catch::StartsWith("config.json: ") && Catch::Contains("backreference"));
  }
}
