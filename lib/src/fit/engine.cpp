#include "provkit/fit/engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <cmath>

#include <nlohmann/json.hpp>

#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"

namespace provkit::fit {

namespace {

// What is wrong with the line, in its own words; the tool says which flag gave it.
Error usage(const std::string& what) { return Error(Reason::usage, what); }

// Shell words: single and double quotes, backslashes; nothing expanded.
std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      auto end = line.find('\'', i + 1);
      if (end == std::string::npos) throw usage("a quote is not closed");
      word += line.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && std::string("\"\\$`").find(line[i + 1]) != std::string::npos) ++i;
        word += line[i];
      }
      if (i >= line.size()) throw usage("a quote is not closed");
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::int64_t integer(const std::string& flag, const std::string& value, std::int64_t low, std::int64_t high) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || v < low || v > high)
    throw usage(flag + " wants a whole number from " + std::to_string(low) + " to " + std::to_string(high) + ", not '" +
                util::printable(value) + "'");
  return v;
}

// llama.cpp's -ts: numbers split by ',' or '/' (common/arg.cpp).
std::vector<double> proportions(const std::string& value) {
  std::vector<double> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    auto end = value.find_first_of(",/", start);
    std::string part = value.substr(start, end == std::string::npos ? std::string::npos : end - start);
    char* stop = nullptr;
    double v = std::strtod(part.c_str(), &stop);
    if (part.empty() || *stop != '\0' || !(v >= 0) || v > 1e9)
      throw usage("-ts wants proportions like 3,1, not '" + util::printable(value) + "'");
    out.push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

bool is_value(const std::string& w) {
  return w.empty() || w[0] != '-' || (w.size() > 1 && (std::isdigit(static_cast<unsigned char>(w[1])) || w[1] == '.'));
}

// A word of the line: `--flag=value` split at its first '=' (both engines take that form), else the word.
struct FlagWord {
  std::string flag, value;
  bool inline_value = false;
};
FlagWord split_flag(const std::string& word) {
  if (auto eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos)
    return {word.substr(0, eq), word.substr(eq + 1), true};
  return {word, "", false};
}

Error vllm_refuses(const std::string& why) { return Error(FitRefusal::engine_refuses, "vLLM refuses this: " + why); }

// vllm/utils/argparse_utils.py human_readable_int: a lowercase suffix is decimal (25.6k = 25600), an
// uppercase one binary and whole (1K = 1024); k, m, g, t.
std::uint64_t human_int(const std::string& flag, const std::string& value) {
  auto invalid = [&] {
    return vllm_refuses("argument " + flag + ": invalid human_readable_int value: '" + util::printable(value) + "'");
  };
  if (value.empty()) throw invalid();
  const char last = value.back();
  static const std::string kSuffixes = "kmgtKMGT";
  const auto at = kSuffixes.find(last);
  std::string digits = at == std::string::npos ? value : value.substr(0, value.size() - 1);
  if (digits.empty() || digits.find_first_not_of("0123456789.") != std::string::npos) throw invalid();
  const double power = at == std::string::npos ? 0 : static_cast<double>(at % 4 + 1);
  if (at != std::string::npos && at >= 4) {
    if (digits.find('.') != std::string::npos) throw invalid();  // binary suffixes take whole numbers
    return static_cast<std::uint64_t>(std::strtoull(digits.c_str(), nullptr, 10)) << (10 * static_cast<int>(power));
  }
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (*end != '\0' || !(v >= 0)) throw invalid();
  v *= std::pow(1000.0, power);
  if (v > 1e18 || v != std::floor(v)) throw invalid();
  return static_cast<std::uint64_t>(v);
}

// CacheDType at vLLM 002f10e0 (vllm/config/cache.py); argparse says the choices when one is not among them.
const std::vector<std::string>& vllm_cache_dtypes() {
  static const std::vector<std::string> types = {"auto",
                                                 "float16",
                                                 "bfloat16",
                                                 "fp8",
                                                 "fp8_e4m3",
                                                 "fp8_e5m2",
                                                 "fp8_inc",
                                                 "fp8_ds_mla",
                                                 "nvfp4_ds_mla",
                                                 "turboquant_k8v4",
                                                 "turboquant_4bit_nc",
                                                 "turboquant_k3v4_nc",
                                                 "turboquant_3bit_nc",
                                                 "int4_per_token_head",
                                                 "int8_per_token_head",
                                                 "fp8_per_token_head",
                                                 "nvfp4",
                                                 "nvfp4_4over6"};
  return types;
}

// `vllm serve MODEL [flags]`: what sizes the KV cache; everything else skipped with its value.
// argparse's choices: the value, or its refusal listing them.
std::string one_of(const std::string& flag, const std::string& v, const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string list;
  for (const auto& t : choices) list += (list.empty() ? "" : ", ") + t;
  throw vllm_refuses("argument " + flag + ": invalid choice: '" + util::printable(v) + "' (choose from " + list + ")");
}

EngineSettings parse_vllm(const std::vector<std::string>& words, std::size_t first) {
  EngineSettings s;
  s.engine = Engine::vllm;
  for (std::size_t i = first; i < words.size(); ++i) {
    FlagWord word = split_flag(words[i]);  // named, not bound: clang's lambdas cannot capture a binding
    std::string& flag = word.flag;
    const std::string& value = word.value;
    const bool inline_value = word.inline_value;
    if (flag.rfind("--", 0) == 0) std::replace(flag.begin() + 2, flag.end(), '_', '-');
    auto take = [&]() -> std::string {
      if (inline_value) return value;
      if (i + 1 >= words.size()) throw vllm_refuses("argument " + flag + ": expected one argument");
      return words[++i];
    };
    auto whole = [&](const std::string& v, std::int64_t low) {
      auto n = static_cast<std::int64_t>(human_int(flag, v));
      if (n < low || n > (1ll << 32) - 1)
        throw vllm_refuses("argument " + flag + ": Input should be greater than or equal to " + std::to_string(low));
      return static_cast<std::uint32_t>(n);
    };
    if (flag == "--model") s.model = take();
    else if (flag == "--revision") s.revision = take();
    else if (!flag.empty() && flag[0] != '-') {
      // One positional: the model (vllm serve's model_tag); argparse refuses a second.
      if (!s.model.empty()) throw vllm_refuses("unrecognized arguments: " + util::printable(flag));
      s.model = flag;
    } else if (flag == "--max-model-len") {
      auto v = take();
      if (v == "-1" || v == "auto") s.vllm.auto_fit = true;
      else s.vllm.max_model_len = human_int(flag, v);
    } else if (flag == "-tp" || flag == "--tensor-parallel-size") s.vllm.tensor_parallel = whole(take(), 1);
    else if (flag == "-pp" || flag == "--pipeline-parallel-size") s.vllm.pipeline_parallel = whole(take(), 1);
    else if (flag == "--kv-cache-dtype") {
      auto v = take();
      const auto& types = vllm_cache_dtypes();
      std::string choices;
      for (const auto& t : types) choices += (choices.empty() ? "" : ", ") + t;
      if (std::find(types.begin(), types.end(), v) == types.end())
        throw vllm_refuses("argument --kv-cache-dtype: invalid choice: '" + util::printable(v) + "' (choose from " +
                           choices + ")");
      s.vllm.kv_cache_dtype = v;
    } else if (flag == "--mamba-cache-dtype" || flag == "--mamba-ssm-cache-dtype" || flag == "--mamba-cache-mode") {
      static const std::vector<std::string> modes = {"all", "align", "none"}, dtypes = {"auto", "float32", "float16"};
      const bool mode = flag == "--mamba-cache-mode";
      (mode                            ? s.vllm.mamba_cache_mode
       : flag == "--mamba-cache-dtype" ? s.vllm.mamba_cache_dtype
                                       : s.vllm.mamba_ssm_cache_dtype) = one_of(flag, take(), mode ? modes : dtypes);
    } else if (flag == "--enable-prefix-caching" || flag == "--no-enable-prefix-caching") {
      s.vllm.prefix_caching = flag == "--enable-prefix-caching";
    } else if (flag == "--gpu-memory-utilization") {
      auto v = take();
      char* end = nullptr;
      double f = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0')
        throw vllm_refuses("argument " + flag + ": invalid float value: '" + util::printable(v) + "'");
      // CacheConfig: Field(gt=0, le=1).
      if (!(f > 0)) throw vllm_refuses("gpu_memory_utilization: Input should be greater than 0");
      if (!(f <= 1)) throw vllm_refuses("gpu_memory_utilization: Input should be less than or equal to 1");
      s.vllm.gpu_memory_utilization = f;
    } else if (flag == "--kv-cache-memory-bytes" || flag == "--kv-cache-memory") {
      s.vllm.kv_cache_memory_bytes = human_int(flag, take());
    } else if (flag == "--max-num-seqs") s.vllm.max_num_seqs = whole(take(), 1);
    else if (flag == "--max-num-batched-tokens") s.vllm.max_num_batched_tokens = whole(take(), 1);
    else if (flag == "--block-size") s.vllm.block_size = whole(take(), 1);
    else if (flag == "--speculative-config") {
      auto v = take();
      auto spec = nlohmann::json::parse(v, nullptr, false);
      if (spec.is_discarded() || !spec.is_object())
        throw vllm_refuses("argument --speculative-config: invalid loads value: '" + util::printable(v) + "'");
      if (spec.contains("num_speculative_tokens")) {
        const auto& n = spec["num_speculative_tokens"];
        if (!n.is_number_integer() || n.get<std::int64_t>() < 0 || n.get<std::int64_t>() > 1024)
          throw vllm_refuses("speculative_config: num_speculative_tokens must be a whole number");
        s.vllm.num_speculative_tokens = n.get<std::uint32_t>();
      }
      if (spec.contains("method") && spec["method"].is_string()) s.vllm.speculative_method = spec["method"];
    } else {
      s.ignored.push_back(flag);
      if (!inline_value && flag[0] == '-' && i + 1 < words.size() && is_value(words[i + 1])) ++i;
    }
  }
  if (s.model.empty()) throw usage("vllm serve names no model (vllm serve MODEL or --model MODEL)");
  return s;
}

}  // namespace

std::string_view engine_name(Engine e) {
  switch (e) {
    case Engine::llama_server: return "llama-server";
    case Engine::llama_cli: return "llama-cli";
    case Engine::llama_completion: return "llama-completion";
    case Engine::vllm: return "vllm";
  }
  return "?";
}

std::optional<CacheType> cache_type(const std::string& name) {
  // common/arg.cpp's kv_cache_types, with ggml.c's type_traits block size and bytes.
  static const CacheType types[] = {{"f32", 1, 4},      {"f16", 1, 2},    {"bf16", 1, 2},
                                    {"q8_0", 32, 34},   {"q4_0", 32, 18}, {"q4_1", 32, 20},
                                    {"iq4_nl", 32, 18}, {"q5_0", 32, 22}, {"q5_1", 32, 24}};
  for (const auto& t : types)
    if (t.name == name) return t;
  return std::nullopt;
}

std::string_view reason_name(FitRefusal r) { return r == FitRefusal::does_not_fit ? "does_not_fit" : "engine_refuses"; }
ExitCode exit_code(FitRefusal r) { return r == FitRefusal::does_not_fit ? ExitCode::check_failed : ExitCode::usage; }

std::uint32_t EngineSettings::sequences() const {
  // llama-server with -np unset runs 4 slots (tools/server: n_parallel -1 -> 4, unified KV).
  if (parallel) return std::max<std::uint32_t>(1, *parallel);
  return engine == Engine::llama_server ? 4 : 1;
}
bool EngineSettings::unified() const {
  if (kv_unified) return *kv_unified;
  return engine == Engine::llama_server && !parallel;
}

EngineSettings parse_engine_args(const std::string& line) {
  auto words = shell_words(line);
  if (words.empty()) throw usage("empty: it names the engine first (llama-server, llama-cli, llama-completion)");
  EngineSettings s;
  std::string tool = words[0].substr(words[0].rfind('/') + 1);
  if (tool == "llama-server") s.engine = Engine::llama_server;
  else if (tool == "llama-cli") s.engine = Engine::llama_cli;
  else if (tool == "llama-completion") s.engine = Engine::llama_completion;
  else if (tool == "vllm") {
    if (words.size() < 2 || words[1] != "serve") throw usage("vLLM's line is `vllm serve MODEL [flags]`");
    return parse_vllm(words, 2);
  } else if ((tool == "python" || tool == "python3") && words.size() > 2 && words[1] == "-m" &&
             words[2] == "vllm.entrypoints.openai.api_server") {
    return parse_vllm(words, 3);
  } else
    throw usage("'" + util::printable(tool) +
                "' is not an engine this planner knows (llama-server, llama-cli, "
                "llama-completion, vllm serve)");
  const bool server = s.engine == Engine::llama_server;

  for (std::size_t i = 1; i < words.size(); ++i) {
    FlagWord word = split_flag(words[i]);  // named, not bound: clang's lambdas cannot capture a binding
    std::string& flag = word.flag;
    const std::string& value = word.value;
    const bool inline_value = word.inline_value;
    auto take = [&]() -> std::string {
      if (inline_value) return value;
      if (i + 1 >= words.size()) throw usage(flag + " wants a value");
      return words[++i];
    };
    auto cache = [&](const std::string& v) {
      auto t = cache_type(v);
      if (!t)
        throw Error(FitRefusal::engine_refuses,
                    "llama.cpp refuses -" + std::string(flag == "-ctk" || flag == "--cache-type-k" ? "ctk" : "ctv") +
                        " " + util::printable(v) + ": Unsupported cache type");
      return *t;
    };
    if (flag == "-m" || flag == "--model") s.model = take();
    else if (flag == "-hf" || flag == "-hfr" || flag == "--hf-repo") s.hf_repo = take();
    else if (flag == "-hff" || flag == "--hf-file") s.hf_file = take();
    else if (flag == "--offline") s.offline = true;
    else if (flag == "-c" || flag == "--ctx-size")
      s.context = static_cast<std::uint32_t>(integer(flag, take(), 0, 1 << 30));
    else if (flag == "-np" || flag == "--parallel") {
      auto n = integer(flag, take(), -1, 256);
      if (n >= 0) s.parallel = static_cast<std::uint32_t>(n);
    } else if (flag == "-kvu" || flag == "--kv-unified" || flag == "--no-kv-unified") {
      // llama.cpp 0.7.0 takes these in llama-server only ("error: invalid argument" elsewhere).
      if (!server)
        throw Error(FitRefusal::engine_refuses,
                    util::concat({"llama.cpp refuses ", flag, " for ", tool, ": invalid argument"}));
      s.kv_unified = flag != "--no-kv-unified";
    } else if (flag == "-ctk" || flag == "--cache-type-k") s.type_k = cache(take());
    else if (flag == "-ctv" || flag == "--cache-type-v") s.type_v = cache(take());
    else if (flag == "-fa" || flag == "--flash-attn") {
      auto v = take();
      if (v == "on" || v == "enabled" || v == "1") s.flash_attn = FlashAttention::on;
      else if (v == "off" || v == "disabled" || v == "0") s.flash_attn = FlashAttention::off;
      else if (v == "auto" || v == "-1") s.flash_attn = FlashAttention::automatic;
      else throw usage("-fa wants on, off or auto, not '" + util::printable(v) + "'");
    } else if (flag == "-b" || flag == "--batch-size")
      s.batch = static_cast<std::uint32_t>(integer(flag, take(), 1, 1 << 30));
    else if (flag == "-ub" || flag == "--ubatch-size")
      s.ubatch = static_cast<std::uint32_t>(integer(flag, take(), 1, 1 << 30));
    else if (flag == "--swa-full") s.swa_full = true;
    else if (flag == "-ngl" || flag == "--gpu-layers" || flag == "--n-gpu-layers") {
      auto v = take();
      if (v == "auto" || v == "all") s.gpu_layers.reset();
      else s.gpu_layers = integer(flag, v, -1, 1 << 20);
      if (s.gpu_layers && *s.gpu_layers < 0) s.gpu_layers.reset();
    } else if (flag == "-ts" || flag == "--tensor-split") s.tensor_split = proportions(take());
    else if (flag == "-sm" || flag == "--split-mode") {
      auto v = take();
      if (v == "none") s.split_mode = SplitMode::none;
      else if (v == "layer") s.split_mode = SplitMode::layer;
      else if (v == "row") s.split_mode = SplitMode::row;
      else throw usage("-sm wants none, layer or row, not '" + util::printable(v) + "'");
    } else if (flag == "-mg" || flag == "--main-gpu")
      s.main_gpu = static_cast<std::uint32_t>(integer(flag, take(), 0, 4096));
    else if (flag == "-nkvo" || flag == "--no-kv-offload") s.kv_offload = false;
    else {
      // Not about memory: skipped with its value, if one follows.
      s.ignored.push_back(flag);
      if (!inline_value && i + 1 < words.size() && is_value(words[i + 1])) ++i;
    }
  }
  return s;
}

}  // namespace provkit::fit
