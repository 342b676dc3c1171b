// envcheck --engine-args: the fit planner (provkit::fit) as a pre-start gate. The model is read from the
// files the command line names on disk, or from the Hugging Face cache for a Hub repository id (vllm serve
// ORG/NAME, llama.cpp's -hf) as the engine finds it offline (checkpoint's local readers: no network, no libcurl in
// envcheck), the cards are the engine's (CUDA_VISIBLE_DEVICES applied) with their free memory now.
#include <algorithm>
#include <optional>

#include "detail.hpp"
#include "provkit/checkpoint/header.hpp"
#include "provkit/checkpoint/hub_cache.hpp"
#include "provkit/host/engine_fit.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/strings.hpp"
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

// A repository the cache does not hold: the engine would fetch it when it starts (a warning: the line is not
// wrong, but nothing here can be planned), or, offline, refuse to start (a failure).
void not_cached(Result& r, const std::string& repo, const std::string& revision, const fs::path& cache,
                const std::string& missing, bool offline, const std::string& offline_why) {
  r.status = offline ? Status::fail : Status::warn;
  r.data["cache_dir"] = cache.string();
  r.reason = "the Hub repository " + util::printable(repo) + " (revision " + util::printable(revision) +
             ") is not in the Hugging Face cache " + util::printable(cache.string()) + " (" + missing + "), so " +
             (offline ? "the engine cannot load it (" + offline_why + ")"
                      : "the engine would fetch it when it starts") +
             " and its memory cannot be planned here";
  r.fix = "fetch it into that cache first: hf-fetch " + util::printable(repo) +
          (revision == "main" ? std::string() : "@" + util::printable(revision));
}

// The file llama.cpp's -hf REPO[:TAG] (and -hff FILE) loads from its cache, as it finds it offline
// (common/hf-cache.cpp, common/download.cpp): refs/main's snapshot, the file named, or the GGUF the tag picks.
// nullopt with `r` saying why when there is none.
std::optional<fs::path> llama_hf_model(const fit::EngineSettings& e, Result& r) {
  r.data["hf_repo"] = e.hf_repo;
  const auto colon = e.hf_repo.find(':');
  const std::string repo = e.hf_repo.substr(0, colon);
  const std::string tag = colon == std::string::npos ? "" : e.hf_repo.substr(e.hf_repo.rfind(':') + 1);
  // llama.cpp takes ORG/NAME only (common_download_split_repo_tag); the Hub's name rule keeps it one folder.
  if (repo.find('/') == std::string::npos || !checkpoint::is_valid_repo_id(repo)) {
    r.reason = "-hf " + util::printable(e.hf_repo) + " is not a Hub repository id (ORG/NAME[:QUANT])";
    r.fix = "name the repository as the Hub does: ORG/NAME, with :QUANT to pick a GGUF";
    return std::nullopt;
  }
  const fs::path cache = checkpoint::llama_hf_cache_dir();
  auto snap = checkpoint::find_cached_snapshot(cache, repo, "main");
  if (snap.dir.empty()) {
    not_cached(r, repo, "main", cache, snap.missing, e.offline, "the line runs llama.cpp offline");
    return std::nullopt;
  }
  r.data["snapshot"] = snap.dir.string();
  std::vector<std::string> paths;
  for (const auto& f : checkpoint::list_local(snap.dir)) paths.push_back(f.path);
  std::optional<std::string> picked;
  if (!e.hf_file.empty()) {
    const std::string wanted = util::lower(e.hf_file);
    for (const auto& p : paths)
      if (util::lower(p) == wanted) {  // llama.cpp compares the names case aside, and takes the first
        picked = p;
        break;
      }
  } else picked = checkpoint::pick_llama_gguf(paths, tag);
  if (!picked) {
    std::string ggufs;
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths)
      if (p.ends_with(".gguf")) ggufs += (ggufs.empty() ? "" : ", ") + util::printable(p);
    r.reason = "the cached snapshot " + util::printable(snap.dir.string()) + " of " + util::printable(repo) +
               " holds no " +
               (!e.hf_file.empty() ? "file " + util::printable(e.hf_file)
                                   : "GGUF for " + (tag.empty() ? std::string("the default quantization")
                                                                : "the quantization " + util::printable(tag))) +
               " (GGUF files there: " + (ggufs.empty() ? std::string("none") : ggufs) + ")";
    r.fix = "fetch that file into the cache (hf-fetch " + util::printable(repo) + "), or pick one the snapshot holds";
    return std::nullopt;
  }
  r.data["model_file"] = *picked;
  return snap.dir / *picked;
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
  fs::path model = e.model;
  std::error_code ec;
  const bool vllm = e.engine == fit::Engine::vllm;
  try {
    if (!vllm && !e.hf_repo.empty()) {  // -hf: llama.cpp loads the file it finds in its cache
      auto file = llama_hf_model(e, r);
      if (!file) return r;
      model = *file;
    } else if (e.model.empty()) {
      r.reason = "the command line names no model";
      r.fix = vllm ? "name the model: vllm serve PATH" : "name the model file: -m PATH.gguf, or -hf ORG/NAME:QUANT";
      return r;
    } else if (vllm && !fs::exists(model, ec) && checkpoint::is_valid_repo_id(e.model)) {
      // vllm serve ORG/NAME: the snapshot huggingface_hub finds for it (and --revision) in the Hub cache.
      const fs::path cache = checkpoint::hub_cache_dir();
      auto snap = checkpoint::find_cached_snapshot(cache, e.model, e.revision);
      if (snap.dir.empty()) {
        not_cached(r, e.model, snap.revision, cache, snap.missing, checkpoint::offline_from_env(),
                   "HF_HUB_OFFLINE is set");
        return r;
      }
      r.data["snapshot"] = snap.dir.string();
      model = snap.dir;
    } else if (!fs::exists(model, ec)) {
      const bool hub_like = vllm && !model.is_absolute();  // vLLM would take it as a repository id
      r.reason = "the model " + util::printable(e.model) + " is not on disk" +
                 (hub_like ? ", and is not a Hub repository id (ORG/NAME by the Hub's name rule)" : "");
      r.fix = "fetch the model to that path first (hf-fetch), or correct the path";
      return r;
    }
  } catch (const Error& x) {  // a revision that is no ref name, a snapshot that cannot be listed
    r.reason = "cannot plan " + util::printable(e.model.empty() ? e.hf_repo : e.model) + ": " +
               util::printable(x.what());
    return r;
  }
  if (!vllm && fs::is_directory(model, ec)) {  // llama.cpp loads one file: a folder would be walked for nothing
    r.reason = "-m " + util::printable(e.model) + " is a directory; llama.cpp loads a GGUF file";
    r.fix = "name the .gguf file (with a gguf-split set, its first part)";
    return r;
  }
  const std::string shown = util::printable(e.model.empty() ? e.hf_repo : e.model);
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
                                                                : "cannot plan " + shown + ": ") +
               util::printable(x.what());
    if (err) r.data["refusal"] = err->reason().name();
    return r;
  }
  auto fit_json = plan.to_json();
  fit_json.erase("layers");  // hf-fetch inspect --json has them; a gate row keeps the totals and the cards
  r.data["fit"] = fit_json;
  const std::string what = shown + ": KV cache " + util::format_size(plan.kv_bytes) + ", recurrent state " +
                           util::format_size(plan.recurrent_bytes) + ", weights " +
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
