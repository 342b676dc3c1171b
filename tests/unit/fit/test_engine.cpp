#include <catch2/catch.hpp>

#include <algorithm>

#include "provkit/fit/engine.hpp"

using namespace provkit;
using namespace provkit::fit;

namespace {
ReasonId refusal_of(const std::string& line) {
  try {
    parse_engine_args(line);
  } catch (const Error& e) {
    return e.reason();
  }
  FAIL("not refused: " << line);
  return Reason::internal;
}
}  // namespace

TEST_CASE("fit engine: llama-server's line read for memory, the rest skipped with its values", "[fit]") {
  auto s = parse_engine_args(
      "/usr/bin/llama-server --host 0.0.0.0 --port 8080 -m '/models/a b.gguf' -c 262144 -np 2 -ctk q8_0 "
      "--cache-type-v=q8_0 -fa on -ts 36,29 -ub 1024 --swa-full -ngl 99 --jinja --seed -1 -nkvo");
  CHECK(s.engine == Engine::llama_server);
  CHECK(s.model == "/models/a b.gguf");
  CHECK(s.context == 262144);
  CHECK(s.sequences() == 2);
  CHECK_FALSE(s.unified());  // -np given: one stream per slot unless --kv-unified
  CHECK(s.type_k.name == "q8_0");
  CHECK(s.type_v.row_bytes(64) == 68);
  CHECK(s.flash_attn == FlashAttention::on);
  CHECK(s.tensor_split == std::vector<double>{36, 29});
  CHECK(s.ubatch == 1024);
  CHECK(s.swa_full);
  CHECK(s.gpu_layers == 99);
  CHECK_FALSE(s.kv_offload);
  CHECK(s.ignored == std::vector<std::string>{"--host", "--port", "--jinja", "--seed"});
}

TEST_CASE("fit engine: each tool's defaults", "[fit]") {
  auto server = parse_engine_args("llama-server -m x.gguf");
  CHECK(server.sequences() == 4);  // -np unset: 4 slots sharing one unified cache
  CHECK(server.unified());
  CHECK(server.context == 0);
  CHECK(server.flash_attn == FlashAttention::automatic);
  CHECK_FALSE(server.gpu_layers);
  auto kvu = parse_engine_args("llama-server -np 3 -kvu -ts 1/1");
  CHECK(kvu.unified());
  CHECK(kvu.tensor_split == std::vector<double>{1, 1});
  auto completion = parse_engine_args("llama-completion -c 1000 -fa off -ngl all");
  CHECK(completion.sequences() == 1);
  CHECK_FALSE(completion.unified());
  CHECK(completion.flash_attn == FlashAttention::off);
  CHECK_FALSE(completion.gpu_layers);
}

TEST_CASE("fit engine: what llama.cpp's parser refuses, it refuses; a line it cannot read is usage", "[fit]") {
  CHECK(refusal_of("llama-server -ctk q3_k") == FitRefusal::engine_refuses);
  CHECK(refusal_of("llama-completion --kv-unified") == FitRefusal::engine_refuses);
  CHECK(reason_name(FitRefusal::engine_refuses) == "engine_refuses");
  CHECK(exit_code(FitRefusal::engine_refuses) == ExitCode::usage);
  CHECK(exit_code(FitRefusal::does_not_fit) == ExitCode::check_failed);
  CHECK(refusal_of("ollama run x") == Reason::usage);
  CHECK(refusal_of("llama-server -c many") == Reason::usage);
  CHECK(refusal_of("llama-server -c") == Reason::usage);
  CHECK(refusal_of("llama-server -fa maybe") == Reason::usage);
  CHECK(refusal_of("llama-server -ts 1,x") == Reason::usage);
  CHECK(refusal_of("llama-server -m 'open") == Reason::usage);
  CHECK(refusal_of("") == Reason::usage);
  // The line's own words; the tool says which flag gave the line (hf-fetch's --engine-args).
  CHECK_THROWS_WITH(parse_engine_args("llama-server -fa maybe"), "-fa wants on, off or auto, not 'maybe'");
  CHECK_THROWS_WITH(parse_engine_args("llama-server -m 'open"), "a quote is not closed");
}

TEST_CASE("fit engine: vllm serve's line read for memory, both flag spellings, the rest skipped", "[fit][vllm]") {
  auto s = parse_engine_args(
      "vllm serve Qwen/Qwen3-32B-FP8 --host 0.0.0.0 --max-model-len 131072 -tp 2 --kv-cache-dtype fp8 "
      "--gpu-memory-utilization 0.92 --enable-prefix-caching --max_num_seqs=8 --max-num-batched-tokens=16k "
      "--block-size 32 -pp=1 --speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 3}'");
  CHECK(s.engine == Engine::vllm);
  CHECK(s.model == "Qwen/Qwen3-32B-FP8");
  CHECK(s.vllm.max_model_len == 131072u);
  CHECK(s.vllm.tensor_parallel == 2);
  CHECK(s.vllm.kv_cache_dtype == "fp8");
  CHECK(s.vllm.gpu_memory_utilization == Approx(0.92));
  CHECK(s.vllm.max_num_seqs == 8u);
  CHECK(s.vllm.max_num_batched_tokens == 16000u);  // lowercase k: decimal, as vLLM's human_readable_int
  CHECK(s.vllm.block_size == 32u);
  CHECK(s.vllm.num_speculative_tokens == 3);
  CHECK(s.vllm.speculative_method == "eagle3");
  CHECK(std::find(s.ignored.begin(), s.ignored.end(), "--host") != s.ignored.end());
  CHECK(s.vllm.prefix_caching == true);  // read: it sets a hybrid's state mode

  auto t = parse_engine_args(
      "python3 -m vllm.entrypoints.openai.api_server --model /m --tensor-parallel-size=4 --max-model-len 1K "
      "--kv-cache-memory-bytes 8G --pipeline-parallel-size 2");
  CHECK(t.model == "/m");
  CHECK(t.vllm.tensor_parallel == 4);
  CHECK(t.vllm.pipeline_parallel == 2);
  CHECK(t.vllm.max_model_len == 1024u);               // uppercase K: binary
  CHECK(t.vllm.kv_cache_memory_bytes == 8ull << 30);  // uppercase G: binary
  CHECK(parse_engine_args("vllm serve m --max-model-len auto").vllm.auto_fit);
}

TEST_CASE("fit engine: what vLLM's own parser refuses, refused with its reason", "[fit][vllm]") {
  auto message = [](const std::string& line) -> std::string {
    try {
      parse_engine_args(line);
    } catch (const Error& e) {
      CHECK(e.reason() == FitRefusal::engine_refuses);
      return e.what();
    }
    FAIL("not refused: " << line);
    return "";
  };
  CHECK(message("vllm serve m --kv-cache-dtype fp16").find("invalid choice: 'fp16'") != std::string::npos);
  CHECK(message("vllm serve m --gpu-memory-utilization 1.5").find("less than or equal to 1") != std::string::npos);
  CHECK(message("vllm serve m --gpu-memory-utilization 0").find("greater than 0") != std::string::npos);
  CHECK(message("vllm serve m --max-model-len 12x").find("human_readable_int") != std::string::npos);
  CHECK(message("vllm serve m --speculative-config {bad").find("--speculative-config") != std::string::npos);
  CHECK(message("vllm serve m -tp 0").find("-tp") != std::string::npos);
  CHECK(message("vllm serve m other").find("unrecognized arguments: other") != std::string::npos);
  CHECK(message("vllm serve m --max-model-len").find("expected one argument") != std::string::npos);
  CHECK(refusal_of("vllm serve") == Reason::usage);  // no model
  CHECK(refusal_of("vllm chat m") == Reason::usage);
}

TEST_CASE("fit engine: a Hub repository named on the line (-hf, --hf-file, --offline; vllm --revision)", "[fit]") {
  auto s = parse_engine_args("llama-server -hf org/M-GGUF:Q4_K_M --hf-file M-Q8_0.gguf --offline -c 4096");
  CHECK(s.hf_repo == "org/M-GGUF:Q4_K_M");
  CHECK(s.hf_file == "M-Q8_0.gguf");
  CHECK(s.offline);
  CHECK(s.model.empty());
  CHECK(s.ignored.empty());
  CHECK(parse_engine_args("llama-cli -hfr org/M -hff x.gguf").hf_file == "x.gguf");
  auto v = parse_engine_args("vllm serve Qwen/Qwen3-8B --revision v2 --max-model-len 32768");
  CHECK(v.model == "Qwen/Qwen3-8B");
  CHECK(v.revision == "v2");
  CHECK(parse_engine_args("vllm serve --model=org/m --revision=abc").revision == "abc");
}
