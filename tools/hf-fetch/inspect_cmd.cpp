// hf-fetch inspect REPO[@REV] | --manifest FILE | PATH...: a checkpoint's
// facts from its headers alone (hub/inspect.hpp reads, checkpoint/report.hpp
// judges and writes the JSON); this file parses flags and words the report.
#include <filesystem>

#include "commands.hpp"
#include "provkit/hub/inspect.hpp"
#include "provkit/util/size.hpp"

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
  auto* gpus = a.cmd->add_option("--gpus", a.gpus, "GPUs to fit the weights on")->check(CLI::Range(1, 4096));
  a.cmd->add_option("--gpu-memory", a.gpu_memory, "memory per GPU (SIZE, e.g. 80G)")->needs(gpus);
  gpus->needs(a.cmd->get_option("--gpu-memory"));
  a.cmd->add_option("--tp", a.tp, "tensor-parallel size (default: all the GPUs)")
      ->check(CLI::Range(1, 4096))
      ->needs(gpus);
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

}  // namespace

int run_inspect(const InspectArgs& a, Output& out) {
  hub::InspectOptions o;
  o.include = a.include;
  o.exclude = a.exclude;
  o.jobs = static_cast<unsigned>(a.jobs);
  if (a.gpus) o.fit = checkpoint::FitRequest{a.gpus, util::parse_size(a.gpu_memory), a.tp};
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
                  "'" + escape_control(a.targets[0]) + "' is neither a path on disk nor REPO[@REVISION]");
    auto c = client();
    r = hub::inspect_repo(c, {hub::RepoType::model, repo->first}, repo->second, o);
  } else {
    r = hub::inspect_paths(std::vector<std::filesystem::path>(a.targets.begin(), a.targets.end()), o);
  }
  if (r.files.empty()) throw Error(ExitCode::usage, "no .safetensors or .gguf file to inspect");

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
  text += "\ntransferred: " + std::to_string(r.transferred) + " bytes";
  int code = r.exit_code();
  // The contradictions were said above, on stderr; a failed consistency check is check_failed.
  std::optional<ReasonId> reason;
  if (code == static_cast<int>(ExitCode::check_failed)) reason = provkit::Reason::check_failed;
  else if (code != 0) reason = reason_for(static_cast<ExitCode>(code));
  out.summary(code, reason, j, text, false);
  return code;
}

}  // namespace hffetch
