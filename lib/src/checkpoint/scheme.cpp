#include "provkit/checkpoint/scheme.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <variant>

#include "provkit/error.hpp"
#include "provkit/util/regex.hpp"
#include "provkit/util/strings.hpp"

// g++ 12 warns "may be used uninitialized" about the temporaries of the
// initializer lists of Parts below (a known false positive of its -O2).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace provkit::checkpoint {

namespace {

using json = nlohmann::json;

std::string last_component(const std::string& module) {
  auto dot = module.rfind('.');
  return dot == std::string::npos ? module : module.substr(dot + 1);
}

bool is_float(const std::string& dtype) {
  return dtype == "BF16" || dtype == "F16" || dtype == "F32" || dtype == "F64";
}

// The part of a tensor name after its module ("weight", "weight_scale_inv", "weight.absmax").
std::string suffix_of(const std::string& tensor) {
  auto m = module_of(tensor);
  return m.size() < tensor.size() ? tensor.substr(m.empty() ? 0 : m.size() + 1) : std::string();
}

// What a quantized linear module stores: the weight tensor and its companions.
struct Part {
  std::string suffix;
  std::vector<std::string> dtypes;  // any of these; empty: any dtype
};
struct Storage {
  std::vector<Part> parts;                       // parts[0] is the weight
  std::uint64_t block_rows = 0, block_cols = 0;  // fp8 block scale of parts[1]; 0: none
};

// One scheme: which modules it quantizes, which it leaves alone by the config's word, and how.
struct Scheme {
  std::string name, source, exclusion_list;
  std::string method, format;
  std::vector<std::uint64_t> block_size;
  bool checked = false;
  std::function<const Storage*(const std::string& module)> storage_for;  // nullptr: not quantized
  std::function<bool(const std::string& module)> excluded;               // named by an exclusion list
};

// transformers' modules_to_not_convert: a key names a module or any module inside it.
bool names_module(const std::string& key, const std::string& module) {
  return ("." + module + ".").find("." + key + ".") != std::string::npos;
}
std::string string_of(const json& j, const char* key, const char* fallback) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}
bool flag_of(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}
std::vector<std::string> strings_of(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// What matching a config's patterns against a checkpoint's module names may cost, in steps of the matcher
// (util::Regex): a config with thousands of patterns over a header of long names is refused, not run for
// hours. DeepSeek-V3's 47,000 linear modules against ten patterns take under 10^8.
constexpr std::uint64_t kMaxMatchSteps = std::uint64_t{1} << 30;

// A module name matched against patterns, all of one check drawing on one budget of steps.
class PatternBudget {
 public:
  explicit PatternBudget(std::string file) : file_(std::move(file)) {}
  bool match(const util::Regex& r, const std::string& module) {
    const bool m = r.match_prefix(module, &steps_);
    if (steps_ > kMaxMatchSteps)
      throw input_error(file_, 0,
                        "quantization_config: matching its patterns against the tensor names takes more than " +
                            std::to_string(kMaxMatchSteps) + " steps");
    return m;
  }

 private:
  std::string file_;
  std::uint64_t steps_ = 0;
};

// compressed-tensors' matching (compressed_tensors.utils.match._match_name): a "re:" pattern is Python's
// re.match (from the start, not to the end), else an exact name; the class "Linear" names every linear
// module. Patterns run on util::Regex, linear in the name, never on a backtracking engine.
struct Matcher {
  std::vector<std::string> names;
  std::vector<util::Regex> patterns;
  bool all_linear = false;
  std::shared_ptr<PatternBudget> budget;
  Matcher(const std::vector<std::string>& items, const std::string& file, std::shared_ptr<PatternBudget> b)
      : budget(std::move(b)) {
    for (const auto& t : items) {
      if (t.rfind("re:", 0) == 0) {
        auto compiled = util::Regex::compile(std::string_view(t).substr(3));
        if (auto* e = std::get_if<util::RegexError>(&compiled))
          throw input_error(file, 0,
                            "quantization_config: '" + t + "' is not a pattern this reader takes: " + e->why +
                                " (at byte " + std::to_string(e->at) + " of the pattern)");
        patterns.push_back(std::get<util::Regex>(std::move(compiled)));
      } else if (t == "Linear") {
        all_linear = true;
      } else {
        names.push_back(t);
      }
    }
  }
  bool operator()(const std::string& module) const {
    if (all_linear) return true;
    for (const auto& n : names)
      if (n == module) return true;
    for (const auto& p : patterns)
      if (budget->match(p, module)) return true;
    return false;
  }
};

// The decoder blocks' modules ("model.layers.3.mlp"): what GPTQ and AWQ quantize.
const util::Regex& decoder_block() {
  static const util::Regex r = std::get<util::Regex>(
      util::Regex::compile(R"((?:[\s\S]*\.)?(?:layers|h|blocks|block|layer)\.[0-9]+\.)"));
  return r;
}

Scheme make_scheme(const json& config, const json& hf_quant, const std::string& config_name,
                   std::vector<std::unique_ptr<Storage>>& keep) {
  auto storage = [&](std::vector<Part> parts) {
    keep.push_back(std::make_unique<Storage>(Storage{std::move(parts), 0, 0}));
    return keep.back().get();
  };
  Scheme s;
  static const json none;
  const json& qc = config.is_object() && config.contains("quantization_config") ? config["quantization_config"] : none;
  std::string method = string_of(qc, "quant_method", "");
  // ModelOpt: hf_quant_config.json's "quantization", or the same fields in config.json.
  json mo;
  if (hf_quant.is_object() && hf_quant.contains("quantization") && hf_quant["quantization"].is_object()) {
    mo = hf_quant["quantization"];
    s.source = "hf_quant_config.json";
  } else if (method == "modelopt") {
    mo = qc;
    s.source = config_name;
  }
  const Storage* fp8_scale = storage({{"weight", {"F8_E4M3"}}, {"weight_scale", {}}});
  if (!mo.is_null()) {
    std::string algo = string_of(mo, "quant_algo", "?");
    s.name = "modelopt " + algo;
    s.method = "modelopt";
    s.format = algo;
    if (algo == "NVFP4") s.block_size = {16};  // NVFP4's micro-block: 16 values share an FP8 scale
    auto patterns = strings_of(mo, "exclude_modules");
    s.exclusion_list = "exclude_modules";
    if (patterns.empty() && mo.contains("ignore")) patterns = strings_of(mo, "ignore"), s.exclusion_list = "ignore";
    s.excluded = [patterns](const std::string& m) {
      for (const auto& p : patterns)
        if (::fnmatch(p.c_str(), m.c_str(), 0) == 0 || names_module(p, m)) return true;
      return false;
    };
    const Storage* st = nullptr;
    if (algo == "FP8") st = fp8_scale;
    if (algo == "NVFP4") st = storage({{"weight", {"U8"}}, {"weight_scale", {"F8_E4M3"}}, {"weight_scale_2", {"F32"}}});
    s.checked = st != nullptr;
    s.storage_for = [st](const std::string&) { return st; };
    return s;
  }
  if (method.empty()) return s;
  s.source = config_name;
  s.name = method;
  s.method = method;
  auto hf_excluded = [](const std::vector<std::string>& keys) {
    return [keys](const std::string& m) {
      for (const auto& k : keys)
        if (names_module(k, m)) return true;
      return false;
    };
  };
  if (method == "fp8") {
    std::string fmt = string_of(qc, "fmt", "e4m3");
    std::string dtype = fmt == "e5m2" ? "F8_E5M2" : "F8_E4M3";
    s.format = fmt;
    Storage st{{{"weight", {dtype}}, {"weight_scale_inv", {"F32", "BF16"}}}, 0, 0};
    if (qc.contains("weight_block_size") && !qc["weight_block_size"].is_null()) {
      const auto& b = qc["weight_block_size"];
      auto positive = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() > 0; };
      if (!b.is_array() || b.size() != 2 || !positive(b[0]) || !positive(b[1]))
        throw input_error(config_name, 0, "quantization_config.weight_block_size is not [rows, columns]");
      st.block_rows = b[0].get<std::uint64_t>();
      st.block_cols = b[1].get<std::uint64_t>();
      s.name += " (weight_block_size [" + std::to_string(st.block_rows) + ", " + std::to_string(st.block_cols) + "])";
      s.block_size = {st.block_rows, st.block_cols};
    } else {
      st.parts[1] = {"weight_scale", {}};  // per-tensor or per-channel scales (vLLM's serialized fp8)
    }
    auto keys = strings_of(qc, "modules_to_not_convert");
    auto ignored = strings_of(qc, "ignored_layers");
    keys.insert(keys.end(), ignored.begin(), ignored.end());
    s.exclusion_list = "modules_to_not_convert";
    s.excluded = hf_excluded(keys);
    keep.push_back(std::make_unique<Storage>(std::move(st)));
    const Storage* p = keep.back().get();
    s.storage_for = [p](const std::string&) { return p; };
    s.checked = true;
  } else if (method == "compressed-tensors") {
    std::string top_format = string_of(qc, "format", "dense");
    s.name += " (" + top_format + ")";
    s.format = top_format;
    auto budget = std::make_shared<PatternBudget>(config_name);
    std::vector<std::pair<Matcher, const Storage*>> groups;
    if (qc.contains("config_groups") && qc["config_groups"].is_object()) {
      for (auto& [gname, g] : qc["config_groups"].items()) {
        if (!g.is_object()) continue;
        std::string format = string_of(g, "format", top_format.c_str());
        const json& w = g.contains("weights") ? g["weights"] : none;
        const Storage* st = nullptr;
        if (w.is_object()) {
          std::string type = string_of(w, "type", "int");
          if (s.block_size.empty() && w.contains("group_size") && w["group_size"].is_number_unsigned())
            s.block_size = {w["group_size"].get<std::uint64_t>()};
          if (s.block_size.empty() && w.contains("block_structure") && w["block_structure"].is_array() &&
              w["block_structure"].size() == 2 && w["block_structure"][0].is_number_unsigned() &&
              w["block_structure"][1].is_number_unsigned())
            s.block_size = {w["block_structure"][0].get<std::uint64_t>(), w["block_structure"][1].get<std::uint64_t>()};
          if (format == "float-quantized") st = fp8_scale;
          else if (format == "naive-quantized" || format == "int-quantized")
            st = storage({{"weight", {type == "float" ? "F8_E4M3" : "I8"}}, {"weight_scale", {}}});
          else if (format == "pack-quantized") st = storage({{"weight_packed", {"I32"}}, {"weight_scale", {}}});
          else if (format == "nvfp4-pack-quantized")
            st = storage({{"weight_packed", {"U8"}}, {"weight_scale", {"F8_E4M3"}}, {"weight_global_scale", {}}});
          else if (format == "mxfp4-pack-quantized")
            st = storage({{"weight_packed", {"U8"}}, {"weight_scale", {"U8"}}});
        }
        if (st) groups.emplace_back(Matcher(strings_of(g, "targets"), config_name, budget), st);
      }
    }
    Matcher ignore(strings_of(qc, "ignore"), config_name, budget);
    s.exclusion_list = "ignore";
    s.excluded = [ignore](const std::string& m) { return ignore(m); };
    s.checked = !groups.empty();
    s.storage_for = [groups](const std::string& m) -> const Storage* {
      for (const auto& [match, st] : groups)
        if (match(m)) return st;
      return nullptr;
    };
  } else if (method == "bitsandbytes") {
    bool four = flag_of(qc, "load_in_4bit"), eight = flag_of(qc, "load_in_8bit");
    s.name += four ? " 4-bit" : eight ? " 8-bit" : "";
    s.format = four ? string_of(qc, "bnb_4bit_quant_type", "4-bit") : eight ? "8-bit" : "";
    auto keys = strings_of(qc, "llm_int8_skip_modules");
    auto more = strings_of(qc, "modules_to_not_convert");
    keys.insert(keys.end(), more.begin(), more.end());
    s.exclusion_list = "llm_int8_skip_modules";
    s.excluded = hf_excluded(keys);
    const Storage* st = four    ? storage({{"weight", {"U8"}}, {"weight.absmax", {}}})
                        : eight ? storage({{"weight", {"I8"}}, {"SCB", {}}})
                                : nullptr;
    s.checked = st != nullptr;
    s.storage_for = [st](const std::string&) { return st; };
  } else if (method == "gptq" || method == "awq") {
    if (qc.contains("bits") && qc["bits"].is_number()) {
      // A whole number of bits, 4 or 4.0 (transformers compares it with [2, 3, 4, 8]); anything else is refused,
      // never converted: 8.1e31 made an int was undefined behaviour (fuzz_quant_config's find).
      double bits = qc["bits"].get<double>();
      if (!(bits >= 1 && bits <= 64) || bits != std::floor(bits))
        throw input_error(config_name, 0, "quantization_config.bits is not a number of bits (1 to 64)");
      s.format = std::to_string(static_cast<int>(bits)) + "-bit";
      s.name += " " + s.format;
    }
    if (qc.contains("group_size") && qc["group_size"].is_number_unsigned())
      s.block_size = {qc["group_size"].get<std::uint64_t>()};
    s.exclusion_list = "modules_to_not_convert";
    s.excluded = hf_excluded(strings_of(qc, "modules_to_not_convert"));
    const Storage* st = storage({{"qweight", {"I32"}}, {"scales", {"F16", "BF16", "F32"}}});
    // Both quantize the linear layers of the decoder blocks, not the head or embeddings.
    s.storage_for = [st](const std::string& m) { return decoder_block().match_prefix(m) ? st : nullptr; };
    s.checked = true;
  } else {
    s.name += " (not checked)";
  }
  return s;
}

bool is_linear(const std::string& module, const std::map<std::string, const Tensor*>& parts) {
  std::string last = last_component(module);
  if (last.find("embed") != std::string::npos || last.find("norm") != std::string::npos || last == "wte" ||
      last == "wpe")
    return false;
  if (parts.count("qweight") || parts.count("weight_packed")) return true;
  auto w = parts.find("weight");
  return w != parts.end() && w->second->shape.size() == 2;
}

}  // namespace

std::string module_of(const std::string& tensor) {
  if (auto w = tensor.find(".weight."); w != std::string::npos) return tensor.substr(0, w);
  auto dot = tensor.rfind('.');
  return dot == std::string::npos ? std::string() : tensor.substr(0, dot);
}

bool is_router_module(const std::string& module) {
  std::string last = last_component(module);
  return last == "gate" || last == "router";
}

SchemeCheck check_quantization(const json& config, const json& hf_quant_config,
                               const std::vector<const Tensor*>& tensors, const std::string& config_name) {
  std::vector<std::unique_ptr<Storage>> keep;
  Scheme scheme = make_scheme(config, hf_quant_config, config_name, keep);
  SchemeCheck out;
  out.scheme = scheme.name.empty() ? "none" : scheme.name;
  out.source = scheme.source;
  out.method = scheme.method;
  out.format = scheme.format;
  out.block_size = scheme.block_size;
  out.checked = scheme.checked;
  if (!scheme.checked) return out;

  std::map<std::string, std::map<std::string, const Tensor*>> modules;
  for (const Tensor* t : tensors) modules[module_of(t->name)][suffix_of(t->name)] = t;
  const std::string declared = out.scheme + " in " + out.source;
  for (const auto& [module, parts] : modules) {
    if (!is_linear(module, parts)) continue;
    ++out.linear_modules;
    const std::string name_of = module.empty() ? "" : module + ".";
    bool excluded = scheme.excluded && scheme.excluded(module);
    const Storage* st = excluded ? nullptr : scheme.storage_for(module);
    auto weight = parts.find("weight");
    bool stored_quantized = parts.count("qweight") || parts.count("weight_packed") ||
                            (weight != parts.end() && !is_float(weight->second->dtype));
    if (stored_quantized) ++out.quantized_modules;
    if (!st) {
      if (excluded && stored_quantized) {
        const Tensor* t = weight != parts.end()    ? weight->second
                          : parts.count("qweight") ? parts.at("qweight")
                                                   : parts.at("weight_packed");
        out.findings.push_back({t->name, t->dtype, "BF16, F16 or F32 (not quantized)",
                                util::concat({module, " is in ", scheme.exclusion_list, " of ", declared,
                                              ", but its weight is stored quantized"})});
      }
      continue;
    }
    // The head and MoE routers stay in high precision unless stored otherwise.
    if (!stored_quantized && (last_component(module) == "lm_head" || is_router_module(module))) continue;
    const Part& wp = st->parts[0];
    auto w = parts.find(wp.suffix);
    auto want = [](const Part& p) { return p.dtypes.empty() ? p.suffix : p.suffix + " as " + join(p.dtypes); };
    if (w == parts.end()) {
      // Not there at all: a plain float weight where the scheme wants a quantized one.
      if (weight == parts.end()) continue;
      out.findings.push_back(
          {weight->second->name, weight->second->dtype, name_of + want(wp),
           util::concat({declared, " quantizes ", module, scheme.exclusion_list.empty() ? "" : " (not in ",
                         scheme.exclusion_list, scheme.exclusion_list.empty() ? "" : ")",
                         ", but its weight is stored as ", weight->second->dtype})});
      continue;
    }
    const Tensor* wt = w->second;
    if (!wp.dtypes.empty() && std::find(wp.dtypes.begin(), wp.dtypes.end(), wt->dtype) == wp.dtypes.end()) {
      out.findings.push_back(
          {wt->name, wt->dtype, join(wp.dtypes),
           util::concat({declared, " quantizes ", module, scheme.exclusion_list.empty() ? "" : " (not in ",
                         scheme.exclusion_list, scheme.exclusion_list.empty() ? "" : ")",
                         ", but its weight is stored as ", wt->dtype})});
      continue;
    }
    for (std::size_t i = 1; i < st->parts.size(); ++i) {
      const Part& p = st->parts[i];
      auto c = parts.find(p.suffix);
      if (c == parts.end()) {
        out.findings.push_back({wt->name, wt->dtype, name_of + want(p),
                                util::concat({"a ", wt->dtype, " weight of ", declared, " needs its scale tensor ",
                                              name_of, p.suffix, ", which is not stored"})});
        continue;
      }
      if (!p.dtypes.empty() && std::find(p.dtypes.begin(), p.dtypes.end(), c->second->dtype) == p.dtypes.end()) {
        out.findings.push_back(
            {c->second->name, c->second->dtype, join(p.dtypes), declared + " stores this scale as " + join(p.dtypes)});
        continue;
      }
      if (i == 1 && st->block_rows && wt->shape.size() == 2) {
        auto b0 = st->block_rows, b1 = st->block_cols;
        std::vector<std::uint64_t> expect{(wt->shape[0] + b0 - 1) / b0, (wt->shape[1] + b1 - 1) / b1};
        if (c->second->shape != expect)
          out.findings.push_back({c->second->name, c->second->dtype,
                                  "shape [" + std::to_string(expect[0]) + ", " + std::to_string(expect[1]) + "]",
                                  "the block scales of a [" + std::to_string(wt->shape[0]) + ", " +
                                      std::to_string(wt->shape[1]) + "] weight in blocks of [" + std::to_string(b0) +
                                      ", " + std::to_string(b1) + "]"});
      }
    }
  }
  return out;
}

}  // namespace provkit::checkpoint
