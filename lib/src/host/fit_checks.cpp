// envcheck --engine-args: the fit planner (provkit::fit) as a pre-start gate. The model is read from the
// files the command line names on disk (checkpoint's local readers: no network, no libcurl in envcheck),
// the cards are the engine's (CUDA_VISIBLE_DEVICES applied) with their free memory now.
#include <algorithm>

#include "detail.hpp"
#include "provkit/checkpoint/header.hpp"
#include "provkit/host/engine_fit.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/text.hpp"

namespace provkit::host::detail {

namespace {

namespace fs = std::filesystem;

// What llama.cpp loads for -m PATH: the file, and with a gguf-split part the set's other parts beside it
// (llama_split_prefix: the name before "-NNNNN-of-NNNNN.gguf").
std::vector<checkpoint::LocalFile> gguf_files(const fs::path& model) {
  auto files = checkpoint::list_local(model);
  const std::string name = model.filename().string();
  if (!checkpoint::is_gguf_split_name(name)) return files;
  const auto of = name.rfind("-of-");
  const std::string prefix = name.substr(0, name.rfind('-', of - 1) + 1);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(model.parent_path().empty() ? "." : model.parent_path(), ec)) {
    const std::string other = e.path().filename().string();
    if (other != name && other.starts_with(prefix) && checkpoint::is_gguf_split_name(other))
      for (auto& f : checkpoint::list_local(e.path())) files.push_back(std::move(f));
  }
  return files;
}

// The headers of the checkpoint files among `files`, and config.json into `config` (null when none).
std::vector<checkpoint::FileHeader> read_model(const std::vector<checkpoint::LocalFile>& files,
                                               nlohmann::json& config) {
  std::vector<checkpoint::FileHeader> headers;
  for (const auto& f : files) {
    checkpoint::Format format{};
    if (checkpoint::is_checkpoint_name(f.path, &format)) headers.push_back(checkpoint::read_local_header(f, format));
    else if (f.path == "config.json") config = nlohmann::json::parse(util::read_file(f.where, 64u << 20));
  }
  return headers;
}

std::string card_text(const fit::GpuRow& g) {
  return "GPU " + std::to_string(g.index) + " (" + util::printable(g.name) + ")";
}

}  // namespace

Result engine_fit_check(const Request& req, Probes& probes) {
  const auto& e = *req.engine;
  Result r{.name = "engine-fit " + std::string(fit::engine_name(e.engine)),
           .status = Status::fail,
           .rule = Rule::engine_fit,
           .threshold = req.engine_args};
  r.data["engine_args"] = req.engine_args;
  r.data["model"] = e.model;
  const fs::path model = e.model;
  std::error_code ec;
  const bool vllm = e.engine == fit::Engine::vllm;
  if (e.model.empty()) {
    r.reason = "the command line names no model";
    r.fix = vllm ? "name the model: vllm serve PATH" : "name the model file: -m PATH.gguf";
    return r;
  }
  if (!fs::exists(model, ec)) {
    // vllm serve ORG/NAME fetches the model when it starts: not wrong, but nothing here to plan from.
    const bool repo_id = vllm && !model.is_absolute() && !e.model.starts_with(".") &&
                         std::count(e.model.begin(), e.model.end(), '/') == 1;
    if (repo_id) r.status = Status::warn;
    r.reason = "the model " + util::printable(e.model) + " is not on disk" +
               (repo_id ? " (a Hub repository the engine would fetch), so its memory cannot be planned here" : "");
    r.fix = repo_id ? "name the downloaded snapshot directory (hf-fetch prints it) instead of the repository"
                    : "fetch the model to that path first (hf-fetch), or correct the path";
    return r;
  }
  if (!vllm && fs::is_directory(model, ec)) {  // llama.cpp loads one file: a folder would be walked for nothing
    r.reason = "-m " + util::printable(e.model) + " is a directory; llama.cpp loads a GGUF file";
    r.fix = "name the .gguf file (with a gguf-split set, its first part)";
    return r;
  }
  std::vector<fit::GpuFacts> cards;
  fit::Plan plan;
  try {
    auto files = vllm ? checkpoint::list_local(model) : gguf_files(model);
    nlohmann::json config;
    auto headers = read_model(files, config);
    cards = fit_gpus(probes.engine_gpus());
    plan = fit::plan_checkpoint(headers, config, e, cards);
  } catch (const std::exception& x) {
    auto* err = dynamic_cast<const Error*>(&x);
    r.reason = (err && err->is(fit::FitRefusal::engine_refuses) ? "the engine would refuse this command line: "
                                                                : "cannot plan " + util::printable(e.model) + ": ") +
               util::printable(x.what());
    if (err) r.data["refusal"] = err->reason().name();
    return r;
  }
  auto fit_json = plan.to_json();
  fit_json.erase("layers");  // hf-fetch inspect --json has them; a gate row keeps the totals and the cards
  r.data["fit"] = fit_json;
  const std::string what = util::printable(e.model) + ": KV cache " + util::format_size(plan.kv_bytes) +
                           ", recurrent state " + util::format_size(plan.recurrent_bytes) + ", weights " +
                           util::format_size(plan.weights_bytes) + " (compute buffers not counted)";
  const std::string most = plan.max_context ? "; the largest " + std::string(vllm ? "--max-model-len" : "-c") +
                                                  " that fits: " + std::to_string(*plan.max_context)
                                            : std::string();
  if (cards.empty()) {
    r.status = Status::warn;
    r.reason = what + "; no GPU is visible to the engine (" +
               (probes.driver().driver_version.empty() ? no_driver_reason(probes.driver())
                                                       : std::string("the driver lists none, or CUDA_VISIBLE_DEVICES "
                                                                     "hides them")) +
               "), so nothing to fit against";
    return r;
  }
  std::string cards_text, short_text;
  for (const auto& g : plan.gpus) {
    if (g.left >= 0)
      cards_text += "; " + card_text(g) + " " + util::format_size(static_cast<std::uint64_t>(g.left)) + " of " +
                    util::format_size(g.free) + " free left";
    else
      short_text += (short_text.empty() ? "" : ", ") + card_text(g) + " is " +
                    util::format_size(static_cast<std::uint64_t>(-g.left)) + " (" + std::to_string(-g.left) +
                    " bytes) short of its " + util::format_size(g.free) + " free";
  }
  if (plan.fits) {
    r.status = Status::pass;
    r.reason = what + cards_text + most;
    return r;
  }
  r.data["refusal"] = fit::reason_name(fit::FitRefusal::does_not_fit);
  r.reason = what + "; does not fit: " + (short_text.empty() ? std::string("no placement fits") : short_text) +
             (plan.vllm && !plan.vllm->refusal.empty() ? "; vLLM would refuse to start: " + plan.vllm->refusal : "") +
             most;
  r.fix = plan.max_context.value_or(0) > 0
              ? "lower " + std::string(vllm ? "--max-model-len" : "-c") + " to " + std::to_string(*plan.max_context) +
                    " or below, or free the short card's memory (envcheck lists what holds it)"
              : "free the short card's memory (envcheck lists what holds it), or use more cards";
  return r;
}

}  // namespace provkit::host::detail
