// hf-fetch inspect REPO[@REV] | --manifest FILE | PATH...: a checkpoint's
// facts from its headers alone (hub/inspect.hpp reads, checkpoint/report.hpp
// judges and writes the JSON); this file parses flags and words the report.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "provkit/cli/convention.hpp"
#include "provkit/fit/plan.hpp"
#include "provkit/fit/vllm.hpp"
#include "provkit/host/engine_fit.hpp"
#include "provkit/hub/inspect.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/text.hpp"

namespace hffetch {

using namespace provkit;
using nlohmann::json;

void add_inspect_command(CLI::App& app, InspectArgs& a) {
  a.cmd = app.add_subcommand(
      "inspect",
      "read the safetensors/GGUF headers of REPO[@REV] (or --manifest FILE, or PATH... on disk): tensors, "
      "bytes per dtype, the quantization scheme's consistency, and whether it fits --gpus N --gpu-memory SIZE");
  a.cmd->add_option("target", a.targets, "REPO[@REVISION] on the Hub, or paths (a snapshot directory, files)");
  a.cmd->add_option("--include", a.include, "only paths matching this glob (repeatable)");
  a.cmd->add_option("--exclude", a.exclude, "leave out paths matching this glob (repeatable)");
  auto* gpus =
      a.cmd
          ->add_option(
              "--gpus", a.gpus,
              "GPUs to fit the weights on; with --engine-args, 'local': this box's cards, their total and free "
              "memory as the driver reads them now (CUDA_VISIBLE_DEVICES honoured, as envcheck does)")
          ->type_name("N|local")
          ->check(CLI::Validator([](std::string& v) { return v == "local" ? std::string() : CLI::Range(1, 4096)(v); },
                                 "N|local"));
  a.cmd
      ->add_option("--gpu-memory", a.gpu_memory,
                   "memory per GPU (SIZE, e.g. 80G); with --engine-args one SIZE per card: 24G,24G")
      ->check(cli::size_list());  // refused naming the flag while the command line is read
  a.cmd->add_option("--tp", a.tp, "tensor-parallel size (default: all the GPUs)")
      ->check(CLI::Range(1, 4096))
      ->needs(gpus);
  a.cmd->add_option("--engine-args", a.engine_args,
                    "the engine's command line ('llama-server -c 65536 -np 2 -ctk q8_0 -fa on -ts 3,1'): plan its "
                    "KV cache, recurrent state and layer split exactly as the engine allocates them");
  a.cmd
      ->add_option("--print", a.print_field,
                   "with --engine-args: print the fit plan's field FIELD (fits, kv_bytes, max_context, ...), "
                   "the value alone (the exit status is still the verdict)")
      ->type_name("FIELD");
}

namespace {

std::string dtypes(const json& by_dtype) {
  std::string s;
  for (auto& [dtype, bytes] : by_dtype.items())
    s += (s.empty() ? "" : ", ") + dtype + " " + human_bytes(bytes.get<std::uint64_t>());
  return s;
}

std::string counts(const json& t) {
  return std::to_string(t["tensors"].get<std::uint64_t>()) + " tensors, " +
         std::to_string(t["elements"].get<std::uint64_t>()) + " elements, " +
         human_bytes(t["bytes"].get<std::uint64_t>()) + " (" + dtypes(t["bytes_by_dtype"]) + ")";
}

// vLLM's numbers as vLLM writes them ("GPU KV cache size: 42,656 tokens").
std::string thousands(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// "GPU 1", or for a card of this box "GPU 1 (local: NVIDIA GeForce RTX 3090, 2.0 GiB of 24.0 GiB free)".
std::string card(const fit::GpuRow& g) {
  std::string label = "GPU " + std::to_string(g.index);
  if (g.source == fit::GpuSource::local)
    label += " (local: " + util::printable(g.name) + ", " + human_bytes(g.free) + " of " + human_bytes(g.total) +
             " free)";
  return label;
}

std::string vllm_text(const fit::Plan& p) {
  const auto& v = *p.vllm;
  std::string text = "\nfit: vllm --max-model-len " + std::to_string(v.max_model_len) + ", tp " +
                     std::to_string(v.tensor_parallel) + " pp " + std::to_string(v.pipeline_parallel) +
                     ", kv-cache-dtype " + v.kv_cache_dtype + ": a page of " + std::to_string(v.page_bytes) +
                     " bytes (" + std::to_string(v.block_size) + " tokens) per layer per rank, " +
                     std::to_string(v.groups) + " KV cache group(s) of " + std::to_string(v.group_size) +
                     " layers; one request of max-model-len needs " + human_bytes(v.request_bytes) + " per rank";
  if (v.state_bytes)
    text += "\n  recurrent layers: a state of " + std::to_string(v.state_bytes) +
            " bytes per sequence per layer (conv " + std::to_string(v.state_conv_bytes) + "), mamba cache mode " +
            (v.mamba_cache_mode.empty() ? std::string("none") : v.mamba_cache_mode);
  for (std::size_t r = 0; r < p.gpus.size(); ++r) {
    const auto& g = p.gpus[r];
    text += "\n  " + card(g) + ": " + std::to_string(g.layers) + " layers, weights " + human_bytes(g.weights_bytes) +
            ", KV memory " +
            (v.available[r] >= 0 ? human_bytes(static_cast<std::uint64_t>(v.available[r]))
                                 : "-" + human_bytes(static_cast<std::uint64_t>(-v.available[r]))) +
            (v.available_estimated ? " (estimated: " + human_bytes(g.total) + " x gpu-memory-utilization - weights - " +
                                         human_bytes(v.activation_estimate) + " profiling estimate)"
                                   : " (--kv-cache-memory-bytes)") +
            ": " +
            (g.left >= 0
                 ? human_bytes(static_cast<std::uint64_t>(g.left)) + " left"
                 : human_bytes(static_cast<std::uint64_t>(-g.left)) + " (" + std::to_string(-g.left) + " bytes) short");
  }
  if (v.kv_tokens && v.refusal.empty())
    text += "\n  vLLM would print: GPU KV cache size: " + thousands(*v.kv_tokens) +
            " tokens; Maximum concurrency for " + thousands(v.max_model_len) + " tokens per request: " + [&] {
              char x[32];
              std::snprintf(x, sizeof x, "%.2fx", *v.max_concurrency);
              return std::string(x);
            }();
  if (v.max_sequences && v.refusal.empty())
    text += "\n  at most " + thousands(*v.max_sequences) + " sequences at once (each holds a block in every group)";
  if (!v.refusal.empty()) text += "\n  vLLM would refuse to start: " + v.refusal;
  if (p.max_context)
    text += std::string("\n  ") + (p.fits ? "fits" : "does not fit") +
            "; the largest --max-model-len that fits: " + std::to_string(*p.max_context);
  return text;
}

// The fit domain says what is wrong with a value; the tool says which flag gave it.
template <class Read>
auto said_as(const char* flag, Read&& read) {
  try {
    return read();
  } catch (const Error& e) {
    if (e.is(provkit::Reason::usage)) throw Error(e, std::string(flag) + ": " + e.what());
    throw;
  }
}

}  // namespace

int run_inspect(const InspectArgs& a, Output& out) {
  hub::InspectOptions o;
  o.include = a.include;
  o.exclude = a.exclude;
  o.jobs = static_cast<unsigned>(a.jobs);
  // --engine-args plans the engine's memory (fit::plan) on the cards --gpu-memory names; without it
  // --gpus N --gpu-memory SIZE counts the weights alone, as before.
  std::optional<fit::EngineSettings> engine;
  std::vector<fit::GpuFacts> cards;
  const bool local = a.gpus == "local";
  const unsigned gpu_count = a.gpus.empty() || local ? 0 : static_cast<unsigned>(std::stoul(a.gpus));  // 1..4096
  std::optional<host::LocalGpus> local_gpus;
  if (local && a.engine_args.empty())
    throw Error(ExitCode::usage, "--gpus local plans an engine's command line: it needs --engine-args");
  if (local && !a.gpu_memory.empty())
    throw Error(ExitCode::usage,
                "--gpus local reads this box's cards; --gpu-memory names another box's: give one or the other");
  if (!a.engine_args.empty()) {
    engine = said_as("--engine-args", [&] { return fit::parse_engine_args(a.engine_args); });
    if (!a.gpu_memory.empty()) cards = said_as("--gpu-memory", [&] { return fit::parse_gpu_memory(a.gpu_memory); });
    if (gpu_count && cards.size() == 1) cards.assign(gpu_count, cards.front());
    if (gpu_count && cards.size() != gpu_count)
      throw Error(ExitCode::usage,
                  "--gpus " + a.gpus + " but --gpu-memory names " + std::to_string(cards.size()) + " cards");
    if (a.tp)
      throw Error(ExitCode::usage, engine->engine == fit::Engine::vllm
                                       ? "--tp: with --engine-args the line's own -tp counts"
                                       : "--tp is vLLM's; llama.cpp splits by -ts in --engine-args");
    if (local) {
      // The cards as envcheck reads them (the same driver probe and CUDA_VISIBLE_DEVICES rule), free memory now.
      local_gpus = host::local_gpus(host::gpu::ProbeOptions::from_environment(),
                                    util::env_get(util::EnvVar::cuda_visible_devices));
      cards = host::fit_gpus(local_gpus->devices);
    }
  } else if (!a.print_field.empty()) {
    throw Error(ExitCode::usage, "--print reads the fit plan: it needs --engine-args");
  } else if (gpu_count || !a.gpu_memory.empty()) {
    if (!gpu_count || a.gpu_memory.empty()) throw Error(ExitCode::usage, "--gpus and --gpu-memory go together");
    if (a.gpu_memory.find(',') != std::string::npos)
      throw Error(ExitCode::usage,
                  "--gpu-memory names one size per card only with --engine-args; without it, "
                  "one SIZE for every card");
    o.fit = checkpoint::FitRequest{gpu_count, util::parse_size(a.gpu_memory), a.tp};
    // Said here, in the flags' words, before any request (the library would refuse it only once headers are read).
    if (checkpoint::problem_of(*o.fit) == checkpoint::FitRequestProblem::tp_does_not_divide)
      throw Error(ExitCode::usage, "--tp " + std::to_string(a.tp) + " does not divide --gpus " + a.gpus);
  }
  auto client = [&] {
    return hub::HubClient(hub::endpoint_from(a.common.endpoint), hub::find_token(a.common.token_file), a.common.http());
  };
  checkpoint::Report r;
  std::error_code ec;
  if (!a.manifest.empty()) {
    if (!a.targets.empty()) throw Error(ExitCode::usage, "inspect takes --manifest FILE or targets, not both");
    auto c = client();
    r = hub::inspect_manifest(c, hub::Manifest::load(a.manifest), o);
  } else if (a.targets.empty()) {
    throw Error(ExitCode::usage, "inspect needs REPO[@REV], --manifest FILE or paths on disk");
  } else if (a.targets.size() == 1 && !std::filesystem::exists(a.targets[0], ec)) {
    auto repo = hub::split_repo_revision(a.targets[0]);
    if (!repo)
      throw Error(ExitCode::usage,
                  "'" + util::printable(a.targets[0]) + "' is neither a path on disk nor REPO[@REVISION]");
    auto c = client();
    r = hub::inspect_repo(c, {hub::RepoType::model, repo->first}, repo->second, o);
  } else {
    r = hub::inspect_paths(std::vector<std::filesystem::path>(a.targets.begin(), a.targets.end()), o);
  }
  if (r.files.empty()) throw Error(ExitCode::usage, "no .safetensors or .gguf file to inspect");

  std::optional<fit::Plan> plan;
  if (engine) plan = said_as("--engine-args", [&] { return fit::plan_checkpoint(r.files, r.config, *engine, cards); });
  if (!a.print_field.empty()) {
    json p = plan->to_json();
    // gpus and layers are rows: --json has them.
    if (!p.contains(a.print_field) || a.print_field == "gpus" || a.print_field == "layers")
      throw Error(ExitCode::usage, "--print: the fit plan has no plain field '" + util::printable(a.print_field) + "'");
    const json& v = p[a.print_field];
    // Never an empty or "null" value for $(...): a field without one here is said, exit 2.
    if (v.is_null() || (v.is_array() && v.empty()))
      throw Error(ExitCode::usage, "--print: the fit plan has no value for '" + util::printable(a.print_field) +
                                       "' here (max_context, max_slots and tensor_split need --gpu-memory)");
    if (v.is_array())
      for (const auto& x : v) std::cout << x.dump() << "\n";
    else std::cout << (v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
    if (r.contradicts()) return static_cast<int>(ExitCode::check_failed);
    return static_cast<int>(plan->fits ? ExitCode::ok : ExitCode::check_failed);
  }

  json j = r.to_json();  // names as they are: the JSON lines escape what is not UTF-8, the plain lines the rest
  for (const auto& f : j["files"]) {
    std::string extra;
    if (f["format"] == "gguf")
      extra = ", GGUF v" + std::to_string(f["gguf_version"].get<int>()) +
              (f["gguf_byte_order"] == "big" ? " big-endian" : "") +
              (f["architecture"].is_string() ? ", architecture " + f["architecture"].get<std::string>() : "") +
              (f["file_type"].is_string() ? ", file type " + f["file_type"].get<std::string>() : "");
    out.event("file", "READ", f["path"], f["format"].get<std::string>() + extra + ": " + counts(f), false,
              {{"tensors", f["tensors"]}, {"bytes", f["bytes"]}});
  }
  for (const auto& n : j["not_read"])
    out.event("file", "NOT READ", n["path"],
              human_bytes(n["size"].get<std::uint64_t>()) + ": " + n["why"].get<std::string>(), false,
              {{"size", n["size"]}, {"why", n["why"]}});
  for (const auto& i : j["indexes"])
    for (const auto& p : i["problems"]) out.event("index", "CONTRADICTS", i["path"], p, true);
  for (const auto& p : j["gguf_split_problems"]) out.event("gguf-split", "CONTRADICTS", "", p, true);
  const auto& q = j["quantization"];
  for (const auto& f : q["findings"])
    out.event("finding", "CONTRADICTS", f["tensor"],
              "stored " +
                  (f["dtype"].get<std::string>().empty() ? std::string("nothing") : f["dtype"].get<std::string>()) +
                  ", expected " + f["expected"].get<std::string>() + ": " + f["why"].get<std::string>(),
              true, f);
  // The files' own bytes beside the tensors': a total that leaves files out says how much.
  std::string text = "total: " + std::to_string(j["files"].size()) + " files of " + human_bytes(r.read_bytes) +
                     (r.not_read.empty() ? std::string()
                                         : " (of the " + human_bytes(r.listed_bytes) + " listed; " +
                                               std::to_string(r.not_read.size()) + " files not read, above)") +
                     ", " + counts(j["total"]) + "\nquantization: " + q["scheme"].get<std::string>() +
                     (q["method"].is_string()
                          ? " (method " + q["method"].get<std::string>() +
                                (q["format"].is_string() ? ", format " + q["format"].get<std::string>() : "") +
                                (q["block_size"].is_array() ? ", block size " + q["block_size"].dump() : "") + ")"
                          : "") +
                     (q["checked"].get<bool>() ? ", findings: " + std::to_string(q["findings"].size()) + " over " +
                                                     std::to_string(q["linear_modules"].get<int>()) + " linear modules"
                                               : "");
  if (r.fit)
    text += "\nfit: " + human_bytes(r.fit->weights_per_gpu) + " of weights per GPU (" + std::to_string(r.fit->gpus) +
            " GPUs, tp " + std::to_string(r.fit->tp) + "), " +
            (r.fit->fits ? human_bytes(static_cast<std::uint64_t>(r.fit->free_per_gpu)) + " of " +
                               human_bytes(r.fit->gpu_memory) + " left: fits"
                         : human_bytes(static_cast<std::uint64_t>(-r.fit->free_per_gpu)) + " more than the " +
                               human_bytes(r.fit->gpu_memory) + " each has: does not fit");
  if (plan && local_gpus) {
    // Where the cards came from, and when none: why, with the memory figures still given (exit 0).
    if (plan->gpus.empty())
      text += "\nfit: --gpus local: " + util::printable(local_gpus->none_why) + "; the memory figures alone";
  }
  if (plan && plan->vllm) {
    j["fit"] = plan->to_json();
    text += vllm_text(*plan);
  } else if (plan) {
    j["fit"] = plan->to_json();
    text += "\nfit: " + std::string(fit::engine_name(plan->engine)) + " -c " + std::to_string(plan->context) + ", " +
            std::to_string(plan->sequences) + (plan->unified ? " unified" : "") + " slots: KV cache " +
            human_bytes(plan->kv_bytes) + ", recurrent state " + human_bytes(plan->recurrent_bytes) + ", weights " +
            human_bytes(plan->weights_bytes) + " (compute buffers not counted)";
    for (const auto& g : plan->gpus)
      text += "\n  " + card(g) + ": " + std::to_string(g.layers) + " layers, weights " + human_bytes(g.weights_bytes) +
              ", KV " + human_bytes(g.kv_bytes) + ", recurrent " + human_bytes(g.recurrent_bytes) + " of " +
              human_bytes(g.free) + ": " +
              (g.left >= 0 ? human_bytes(static_cast<std::uint64_t>(g.left)) + " left"
                           : human_bytes(static_cast<std::uint64_t>(-g.left)) + " short");
    if (!plan->gpus.empty())
      text += std::string("\n  ") + (plan->fits ? "fits" : "does not fit") +
              "; the largest -c that fits: " + std::to_string(plan->max_context.value_or(0)) +
              ", the most slots at this context per slot: " + std::to_string(plan->max_slots.value_or(0));
  }
  if (plan && local_gpus)
    j["fit"]["local_gpus"] = {{"cards", local_gpus->devices.size()},
                              {"cuda_visible_devices",
                               local_gpus->cuda_visible_devices ? json(*local_gpus->cuda_visible_devices) : json()},
                              {"none_why", local_gpus->none_why.empty() ? json() : json(local_gpus->none_why)}};
  text += "\ntransferred: " + std::to_string(r.transferred) + " bytes";
  // A plan that does not fit is a problem line of its own, as a contradiction is: --quiet keeps it.
  if (r.fit && !r.fit->fits)
    out.event("fit", "DOES NOT FIT", "",
              human_bytes(r.fit->weights_per_gpu) + " of weights per GPU is " +
                  human_bytes(static_cast<std::uint64_t>(-r.fit->free_per_gpu)) + " more than the " +
                  human_bytes(r.fit->gpu_memory) + " each has",
              true);
  if (plan && !plan->gpus.empty() && !plan->fits) {
    std::string short_of;
    for (const auto& g : plan->gpus)
      if (g.left < 0)
        short_of += (short_of.empty() ? "" : ", ") +
                    (card(g) + " is " + human_bytes(static_cast<std::uint64_t>(-g.left)) + " short");
    out.event("fit", "DOES NOT FIT", "",
              std::string(fit::engine_name(plan->engine)) + " -c " + std::to_string(plan->context) + ": " +
                  (short_of.empty() ? std::string("no placement fits") : short_of) +
                  "; the largest -c that fits: " + std::to_string(plan->max_context.value_or(0)),
              true);
  }
  int code = r.exit_code();
  // The contradictions were said above, on stderr; a failed consistency check is check_failed, a plan
  // that does not fit does_not_fit (a contradiction wins: it says the facts themselves are wrong).
  std::optional<ReasonId> reason;
  if (code == 0 && plan && !plan->fits) {
    code = static_cast<int>(ExitCode::check_failed);
    reason = fit::FitRefusal::does_not_fit;
  } else if (code == static_cast<int>(ExitCode::check_failed)) reason = provkit::Reason::check_failed;
  else if (code != 0) reason = reason_for(static_cast<ExitCode>(code));
  out.summary(code, reason, j, text, false);
  return code;
}

}  // namespace hffetch
