#pragma once
// A checkpoint's facts from its headers alone: per file and in total the
// tensors, elements and bytes per dtype; the cross-checks against
// model.safetensors.index.json and a gguf-split set; the quantization
// scheme's findings; whether it fits on the GPUs named; and its JSON.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "provkit/checkpoint/header.hpp"
#include "provkit/checkpoint/scheme.hpp"

namespace provkit::checkpoint {

struct Totals {
  std::uint64_t tensors = 0, elements = 0, bytes = 0;
  std::map<std::string, std::uint64_t> bytes_by_dtype;
  // Throws Error(util::SumRefusal::overflow) naming `file` and the tensor where a total would pass 2^64 - 1.
  void add(const Tensor& t, std::string_view file);
};

// The small JSON files beside the weights, by their path in the checkpoint
// (text as read; absent files are not in the map).
using Sidecars = std::map<std::string, std::string>;
// The names read as sidecars: config.json, hf_quant_config.json, *.safetensors.index.json.
bool is_sidecar_name(const std::string& path);

struct IndexCheck {
  std::string path;
  std::optional<std::uint64_t> total_size;  // metadata.total_size
  std::uint64_t tensor_bytes = 0;           // the bytes of the tensors in the files it names
  std::uint64_t entries = 0;                // weight_map entries
  std::vector<std::string> not_read;        // files it names that were left out
  std::vector<std::string> problems;        // each a sentence
};

struct FitRequest {
  unsigned gpus = 1;
  std::uint64_t gpu_memory = 0;
  unsigned tp = 0;  // 0: all the GPUs
};
// Why a FitRequest cannot be planned, as data: the tool says it in its own words (its flags) before any
// request; fit() refuses the same, in words that name no flag, for a caller that did not ask first.
enum class FitRequestProblem {
  no_gpus,             // gpus is 0
  tp_does_not_divide,  // tp is more than gpus, or gpus is not a multiple of it
};
std::optional<FitRequestProblem> problem_of(const FitRequest& request);
struct Fit {
  unsigned gpus = 0, tp = 0;
  std::uint64_t gpu_memory = 0;
  std::uint64_t sharded_bytes = 0, replicated_bytes = 0;
  std::uint64_t weights_per_gpu = 0;
  std::int64_t free_per_gpu = 0;  // negative: short by that much
  bool fits = false;
};
// Tensors of two or more dimensions are split evenly across the `tp` GPUs of
// a replica; vectors, scalars and MoE routers are kept whole on each
// (vLLM's tensor parallelism). Throws Error(usage) for a request with a problem_of, Error(util::SumRefusal::overflow)
// naming the file for bytes that add up past 2^64 - 1.
Fit fit(const std::vector<FileHeader>& files, const FitRequest& request);

// A file of the checkpoint whose header was not read, and why (its bytes are
// not in the totals: the report says so rather than give a short total).
struct NotRead {
  std::string path;
  std::uint64_t size = 0;
  std::string why;
};

// A GGUF file's general.file_type, named (nullopt: absent, or an id llama.cpp does not define).
std::optional<std::string> gguf_file_type_name(const FileHeader& file);

struct Report {
  std::string repo, revision;  // empty for local paths
  std::vector<FileHeader> files;
  Totals total;
  std::uint64_t read_bytes = 0;    // the sizes of the files read (an assembled file counts whole)
  std::uint64_t listed_bytes = 0;  // the sizes of every file listed, read or not
  std::vector<NotRead> not_read;
  std::vector<IndexCheck> indexes;
  std::vector<std::string> split_problems;  // gguf-split sets
  SchemeCheck quantization;
  std::optional<Fit> fit;
  nlohmann::json config;                // config.json as read (null: none); the vLLM planner reads it
  std::uint64_t transferred = 0;        // bytes read: header ranges and sidecars
  std::uint64_t header_bytes_peak = 0;  // the most header bytes held at once (InspectOptions::header_budget)

  // A contradiction: a quantization finding, an index or split problem.
  bool contradicts() const;
  // exit 1 when it contradicts or does not fit, else 0.
  int exit_code() const;
  nlohmann::json to_json() const;
};

// Builds the report from the headers read and the sidecars (their JSON
// malformed: Error(usage) naming the file). `left_out`: checkpoint files that
// exist but were not read (--include/--exclude): an index naming one, or a
// gguf-split set missing one, is not a contradiction for that.
Report make_report(std::vector<FileHeader> files, const Sidecars& sidecars,
                   const std::optional<FitRequest>& fit_request, const std::set<std::string>& left_out = {});

// JSON text that is always valid UTF-8 (names from a file may not be).
std::string dump(const nlohmann::json& j);

}  // namespace provkit::checkpoint
