#include "provkit/checkpoint/report.hpp"

#include <algorithm>
#include <set>

#include "gguf.hpp"
#include "provkit/error.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/json.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::checkpoint {

namespace {

using json = nlohmann::json;
constexpr std::size_t kMaxProblems = 20;  // per check; the rest are counted

void problem(std::vector<std::string>& list, std::size_t& dropped, std::string sentence) {
  if (list.size() < kMaxProblems) list.push_back(std::move(sentence));
  else ++dropped;
}
void close_list(std::vector<std::string>& list, std::size_t dropped) {
  if (dropped) list.push_back("and " + std::to_string(dropped) + " more like these");
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

json parse_sidecar(const std::string& path, const std::string& text) {
  json j = util::parse_untrusted(text, path);
  if (!j.is_object()) throw input_error(path, 0, "not a JSON object");
  return j;
}

IndexCheck check_index(const std::string& path, const json& doc,
                       const std::map<std::string, const FileHeader*>& by_path, const std::set<std::string>& left_out) {
  IndexCheck c;
  c.path = path;
  std::size_t dropped = 0;
  if (doc.contains("metadata") && doc["metadata"].is_object() && doc["metadata"].contains("total_size") &&
      doc["metadata"]["total_size"].is_number_integer() && doc["metadata"]["total_size"].get<std::int64_t>() >= 0)
    c.total_size = doc["metadata"]["total_size"].get<std::uint64_t>();
  if (!doc.contains("weight_map") || !doc["weight_map"].is_object()) {
    c.problems.push_back(path + " has no weight_map");
    return c;
  }
  const std::string dir = dir_of(path);
  std::map<std::string, std::set<std::string>> expected;  // file -> tensors the map puts there
  util::CheckedSum tensor_bytes("the tensor bytes of the files " + path + " names");
  for (auto& [tensor, file] : doc["weight_map"].items()) {
    ++c.entries;
    if (!file.is_string()) {
      problem(c.problems, dropped, "weight_map entry '" + tensor + "' does not name a file");
      continue;
    }
    expected[dir + file.get<std::string>()].insert(tensor);
  }
  for (const auto& [file, names] : expected) {
    auto f = by_path.find(file);
    if (f == by_path.end() && left_out.count(file)) {
      c.not_read.push_back(file);
      continue;
    }
    if (f == by_path.end()) {
      problem(c.problems, dropped,
              "weight_map names " + file + " (" + std::to_string(names.size()) +
                  " tensors), which is not in the checkpoint");
      continue;
    }
    std::set<std::string> stored;
    for (const auto& t : f->second->tensors) {
      stored.insert(t.name);
      tensor_bytes.add(t.bytes, file);
      if (!names.count(t.name))
        problem(c.problems, dropped, "tensor " + t.name + " of " + file + " is not in the weight_map under that file");
    }
    for (const auto& n : names)
      if (!stored.count(n))
        problem(c.problems, dropped,
                util::concat({"weight_map puts tensor ", n, " in ", file, ", which does not hold it"}));
  }
  c.tensor_bytes = tensor_bytes.value();
  if (c.total_size && *c.total_size != c.tensor_bytes && c.not_read.empty())
    problem(c.problems, dropped,
            "metadata.total_size is " + std::to_string(*c.total_size) +
                " bytes, the tensors of the files it names hold " + std::to_string(c.tensor_bytes));
  close_list(c.problems, dropped);
  return c;
}

// gguf-split sets: every part of split.count there, each split.no once, the tensors adding up to split.tensors.count.
std::vector<std::string> check_splits(const std::vector<FileHeader>& files, const std::set<std::string>& left_out) {
  struct Set {
    std::uint64_t count = 0, tensors_declared = 0, tensors = 0;
    std::set<std::uint64_t> parts;
    std::vector<std::string> problems;
  };
  std::map<std::string, Set> sets;
  std::vector<std::string> out_of_set;
  auto split_number = [](std::uint64_t n) {
    std::string digits = std::to_string(n);
    return std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
  };
  auto num = [](const json& m, const char* k) -> std::optional<std::uint64_t> {
    if (m.contains(k) && m[k].is_number_integer() && m[k].get<std::int64_t>() >= 0) return m[k].get<std::uint64_t>();
    return std::nullopt;
  };
  for (const auto& f : files) {
    if (f.format != Format::gguf) continue;
    auto count = num(f.metadata, "split.count"), no = num(f.metadata, "split.no");
    if (!count || !no) continue;
    if (*count > 1 && !is_gguf_split_name(f.path)) {
      // One file that calls itself a part: gguf-split parts joined byte by byte (cat, an --assemble of them).
      out_of_set.push_back(
          f.path + " is part " + std::to_string(*no + 1) + " of a " + std::to_string(*count) +
          "-part gguf-split set by its metadata (split.no " + std::to_string(*no) + ", split.count " +
          std::to_string(*count) +
          ") but is one file, not named as a part: gguf-split parts joined byte by byte make such a file, and "
          "llama.cpp cannot load it. Keep the parts as they are and load the first (llama-server -m "
          "NAME-00001-of-" +
          split_number(*count) + ".gguf), or make one file of them with llama-gguf-split --merge");
      continue;
    }
    // "name-00001-of-00003.gguf" -> "name"
    std::string key = f.path;
    if (auto dash = key.rfind("-of-"); dash != std::string::npos && dash >= 6) key = key.substr(0, dash - 6);
    Set& s = sets[key];
    // llama.cpp's gguf-split numbers the parts from 0 (split.no) in files named from 00001.
    if (*no >= *count)
      s.problems.push_back(f.path + " says split.no " + std::to_string(*no) + " of split.count " +
                           std::to_string(*count));
    if (s.count && s.count != *count)
      s.problems.push_back(f.path + " says split.count " + std::to_string(*count) + ", another part " +
                           std::to_string(s.count));
    s.count = *count;
    if (!s.parts.insert(*no).second) s.problems.push_back(f.path + " repeats split.no " + std::to_string(*no));
    if (auto declared = num(f.metadata, "split.tensors.count")) s.tensors_declared = *declared;
    s.tensors += f.tensors.size();  // each file's count is bounded (kMaxGgufTensors)
  }
  std::vector<std::string> out = std::move(out_of_set);
  for (auto& [key, s] : sets) {
    out.insert(out.end(), s.problems.begin(), s.problems.end());
    const std::string& prefix = key;
    bool parts_left_out = std::any_of(left_out.begin(), left_out.end(),
                                      [&](const std::string& p) { return p.rfind(prefix, 0) == 0; });
    if (parts_left_out) continue;  // not all read: nothing to say about the whole
    if (s.parts.size() != s.count)
      out.push_back(key + ": " + std::to_string(s.parts.size()) + " of the " + std::to_string(s.count) +
                    " gguf-split parts are here");
    else if (s.tensors_declared && s.tensors != s.tensors_declared)
      out.push_back(key + ": the parts hold " + std::to_string(s.tensors) + " tensors, split.tensors.count says " +
                    std::to_string(s.tensors_declared));
  }
  return out;
}

// GGUF files with no declared scheme of their own: the file type of the
// files holding the most tensor bytes (a model beside its F16 mmproj is the model's).
void gguf_scheme(const std::vector<FileHeader>& files, SchemeCheck& q) {
  std::map<std::uint32_t, std::uint64_t> bytes_by_type;
  std::map<std::uint32_t, std::string> first_file;
  for (const auto& f : files) {
    if (f.format != Format::gguf || !f.metadata.contains("general.file_type") ||
        !f.metadata["general.file_type"].is_number_unsigned())
      continue;
    auto id = f.metadata["general.file_type"].get<std::uint64_t>();
    if (id > 0xffffffffu || !gguf_file_type(static_cast<std::uint32_t>(id))) continue;
    util::CheckedSum bytes("the tensor bytes of the GGUF files of one type",
                           bytes_by_type[static_cast<std::uint32_t>(id)]);
    for (const auto& t : f.tensors) bytes.add(t.bytes, f.path);
    bytes_by_type[static_cast<std::uint32_t>(id)] = bytes.value();
    first_file.emplace(static_cast<std::uint32_t>(id), f.path);
  }
  if (bytes_by_type.empty()) return;
  auto most = std::max_element(bytes_by_type.begin(), bytes_by_type.end(),
                               [](auto& a, auto& b) { return a.second < b.second; });
  auto type = *gguf_file_type(most->first);
  q.scheme = "gguf " + std::string(type.name);
  q.source = first_file[most->first];
  q.method = "gguf";
  q.format = type.name;
  q.weight_type = type.weight_type;
  q.block_size = {type.block_size};
  q.checked = false;  // GGUF carries each tensor's type: nothing to check against
}

json totals_json(const Totals& t) {
  return {{"tensors", t.tensors}, {"elements", t.elements}, {"bytes", t.bytes}, {"bytes_by_dtype", t.bytes_by_dtype}};
}

}  // namespace

void Totals::add(const Tensor& t, std::string_view file) {
  const std::string item = std::string(file) + " (tensor " + t.name + ")";
  // Checked before anything changes: a refused tensor leaves the totals as they were.
  auto new_elements = util::CheckedSum("the tensors' elements", elements).add(t.elements, item).value();
  auto new_bytes = util::CheckedSum("the tensors' bytes", bytes).add(t.bytes, item).value();
  ++tensors;
  elements = new_elements;
  bytes = new_bytes;
  bytes_by_dtype[t.dtype] += t.bytes;  // within bytes, which did not overflow
}

std::optional<std::string> gguf_file_type_name(const FileHeader& f) {
  if (f.format != Format::gguf || !f.metadata.contains("general.file_type") ||
      !f.metadata["general.file_type"].is_number_unsigned())
    return std::nullopt;
  auto id = f.metadata["general.file_type"].get<std::uint64_t>();
  auto type = id <= 0xffffffffu ? gguf_file_type(static_cast<std::uint32_t>(id)) : std::nullopt;
  if (!type) return std::nullopt;
  return std::string(type->name);
}

bool is_sidecar_name(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  return path == "config.json" || path == "hf_quant_config.json" || ends_with(name, ".safetensors.index.json");
}

std::optional<FitRequestProblem> problem_of(const FitRequest& r) {
  if (r.gpus == 0) return FitRequestProblem::no_gpus;
  unsigned tp = r.tp ? r.tp : r.gpus;
  if (tp > r.gpus || r.gpus % tp != 0) return FitRequestProblem::tp_does_not_divide;
  return std::nullopt;
}

Fit fit(const std::vector<FileHeader>& files, const FitRequest& r) {
  Fit f;
  f.gpus = r.gpus;
  f.tp = r.tp ? r.tp : r.gpus;
  f.gpu_memory = r.gpu_memory;
  if (auto problem = problem_of(r))
    throw Error(ExitCode::usage, *problem == FitRequestProblem::no_gpus
                                     ? std::string("a fit needs at least one GPU")
                                     : "a tensor-parallel size of " + std::to_string(f.tp) + " does not divide " +
                                           std::to_string(f.gpus) + " GPUs");
  util::CheckedSum sharded("the bytes of the tensors split across GPUs");
  util::CheckedSum replicated("the bytes of the tensors kept whole on each GPU");
  for (const auto& file : files)
    for (const auto& t : file.tensors)
      (t.shape.size() >= 2 && !is_router_module(module_of(t.name)) ? sharded : replicated).add(t.bytes, file.path);
  f.sharded_bytes = sharded.value();
  f.replicated_bytes = replicated.value();
  const std::uint64_t share = f.sharded_bytes / f.tp + (f.sharded_bytes % f.tp != 0);  // rounded up, never past 2^64
  auto per_gpu = util::checked_add(share, f.replicated_bytes);
  if (!per_gpu) throw util::sum_overflow("the weights per GPU", "the checkpoint", share, f.replicated_bytes);
  f.weights_per_gpu = *per_gpu;
  // The difference as a signed number, held at int64's ends rather than wrapped.
  constexpr auto kMaxSigned = static_cast<std::uint64_t>(INT64_MAX);
  f.free_per_gpu = f.gpu_memory >= f.weights_per_gpu
                       ? static_cast<std::int64_t>(std::min(f.gpu_memory - f.weights_per_gpu, kMaxSigned))
                       : -static_cast<std::int64_t>(std::min(f.weights_per_gpu - f.gpu_memory, kMaxSigned));
  f.fits = f.weights_per_gpu <= f.gpu_memory;
  return f;
}

Report make_report(std::vector<FileHeader> files, const Sidecars& sidecars,
                   const std::optional<FitRequest>& fit_request, const std::set<std::string>& left_out) {
  Report r;
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  r.files = std::move(files);
  std::map<std::string, const FileHeader*> by_path;
  std::vector<const Tensor*> safetensors;
  util::CheckedSum read("the sizes of the files read");
  for (const auto& f : r.files) {
    read.add(f.file_size, f.path);
    by_path[f.path] = &f;
    for (const auto& t : f.tensors) {
      r.total.add(t, f.path);
      if (f.format == Format::safetensors) safetensors.push_back(&t);
    }
  }
  json config, hf_quant;
  for (const auto& [path, text] : sidecars) {
    json doc = parse_sidecar(path, text);
    if (path == "config.json") config = std::move(doc);
    else if (path == "hf_quant_config.json") hf_quant = std::move(doc);
    else r.indexes.push_back(check_index(path, doc, by_path, left_out));
  }
  r.read_bytes = read.value();
  r.split_problems = check_splits(r.files, left_out);
  r.quantization = check_quantization(config, hf_quant, safetensors);
  r.config = config;
  if (r.quantization.method.empty()) gguf_scheme(r.files, r.quantization);
  if (fit_request) r.fit = fit(r.files, *fit_request);
  return r;
}

bool Report::contradicts() const {
  if (!quantization.findings.empty() || !split_problems.empty()) return true;
  return std::any_of(indexes.begin(), indexes.end(), [](const auto& i) { return !i.problems.empty(); });
}

int Report::exit_code() const { return contradicts() || (fit && !fit->fits) ? 1 : 0; }

json Report::to_json() const {
  json j;
  j["repo"] = repo.empty() ? json() : json(repo);
  j["revision"] = revision.empty() ? json() : json(revision);
  j["files"] = json::array();
  for (const auto& f : files) {
    Totals t;
    for (const auto& x : f.tensors) t.add(x, f.path);
    json fj = totals_json(t);
    fj["path"] = f.path;
    fj["format"] = format_name(f.format);
    fj["size"] = f.file_size;
    fj["header_bytes"] = f.header_bytes;
    if (f.format == Format::gguf) {
      fj["gguf_version"] = f.gguf_version;
      fj["gguf_byte_order"] = f.gguf_big_endian ? "big" : "little";
      fj["architecture"] = f.metadata.contains("general.architecture") ? f.metadata["general.architecture"] : json();
      auto type = gguf_file_type_name(f);
      fj["file_type"] = type ? json(*type) : json();
    }
    fj["metadata"] = f.metadata;
    j["files"].push_back(std::move(fj));
  }
  j["total"] = totals_json(total);
  j["total"]["files"] = files.size();
  j["total"]["file_bytes"] = read_bytes;
  j["listed_bytes"] = listed_bytes;
  j["not_read"] = json::array();
  for (const auto& n : not_read) j["not_read"].push_back({{"path", n.path}, {"size", n.size}, {"why", n.why}});
  j["indexes"] = json::array();
  for (const auto& i : indexes)
    j["indexes"].push_back({{"path", i.path},
                            {"total_size", i.total_size ? json(*i.total_size) : json()},
                            {"tensor_bytes", i.tensor_bytes},
                            {"entries", i.entries},
                            {"not_read", i.not_read},
                            {"problems", i.problems}});
  j["gguf_split_problems"] = split_problems;
  json findings = json::array();
  for (const auto& f : quantization.findings)
    findings.push_back({{"tensor", f.tensor}, {"dtype", f.dtype}, {"expected", f.expected}, {"why", f.why}});
  j["quantization"] = {{"scheme", quantization.scheme},
                       {"source", quantization.source},
                       {"checked", quantization.checked},
                       {"method", quantization.method.empty() ? json() : json(quantization.method)},
                       {"format", quantization.format.empty() ? json() : json(quantization.format)},
                       {"weight_type", quantization.weight_type.empty() ? json() : json(quantization.weight_type)},
                       {"block_size", quantization.block_size.empty() ? json() : json(quantization.block_size)},
                       {"linear_modules", quantization.linear_modules},
                       {"quantized_modules", quantization.quantized_modules},
                       {"findings", findings}};
  j["fit"] = fit ? json{{"gpus", fit->gpus},
                        {"gpu_memory", fit->gpu_memory},
                        {"tp", fit->tp},
                        {"sharded_bytes", fit->sharded_bytes},
                        {"replicated_bytes", fit->replicated_bytes},
                        {"weights_per_gpu", fit->weights_per_gpu},
                        {"free_per_gpu", fit->free_per_gpu},
                        {"fits", fit->fits}}
                 : json();
  j["transferred"] = transferred;
  j["exit_code"] = exit_code();
  return j;
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace provkit::checkpoint
