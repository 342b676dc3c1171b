#include <catch2/catch.hpp>
#include <cstdint>

#include "checkpoint/builders.hpp"
#include "checkpoint/safetensors.hpp"
#include "provkit/checkpoint/report.hpp"
#include "provkit/error.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/json.hpp"

using namespace provkit;
using namespace provkit::checkpoint;
using namespace checkpoint_test;
using json = nlohmann::json;

namespace {
FileHeader st(const std::string& path, const std::vector<StTensor>& tensors) {
  std::string f = safetensors_of(tensors);
  return std::get<FileHeader>(parse_safetensors(f, f.size(), path));
}
std::vector<FileHeader> two_shards() {
  return {st("m-1.safetensors", {{"a.weight", "BF16", {64, 64}}, {"n.weight", "BF16", {64}}}),
          st("m-2.safetensors", {{"b.weight", "BF16", {64, 128}}})};
}
}  // namespace

TEST_CASE("report: totals per file and per dtype, and an index that agrees", "[checkpoint]") {
  json index = {{"metadata", {{"total_size", 64 * 64 * 2 + 128 + 64 * 128 * 2}}},
                {"weight_map",
                 {{"a.weight", "m-1.safetensors"}, {"n.weight", "m-1.safetensors"}, {"b.weight", "m-2.safetensors"}}}};
  auto r = make_report(two_shards(), {{"model.safetensors.index.json", index.dump()}}, std::nullopt);
  CHECK(r.total.tensors == 3);
  CHECK(r.total.elements == 64 * 64 + 64 + 64 * 128);
  CHECK(r.total.bytes_by_dtype.at("BF16") == 2 * r.total.elements);
  REQUIRE(r.indexes.size() == 1);
  CHECK(r.indexes[0].problems.empty());
  CHECK(r.exit_code() == 0);
  json j = r.to_json();
  CHECK(j["files"][0]["path"] == "m-1.safetensors");
  CHECK(j["files"][0]["tensors"] == 2);
  CHECK(j["total"]["bytes"] == r.total.bytes);
  CHECK(j["quantization"]["scheme"] == "none");
  CHECK(j["fit"].is_null());
}

TEST_CASE("report: an index that lies is a contradiction", "[checkpoint]") {
  json index = {{"metadata", {{"total_size", 5}}},
                {"weight_map",
                 {{"a.weight", "m-1.safetensors"}, {"b.weight", "m-1.safetensors"}, {"c.weight", "m-3.safetensors"}}}};
  auto r = make_report(two_shards(), {{"model.safetensors.index.json", index.dump()}}, std::nullopt);
  auto& p = r.indexes.at(0).problems;
  auto has = [&](const std::string& s) {
    return std::any_of(p.begin(), p.end(), [&](auto& x) { return x.find(s) != std::string::npos; });
  };
  CHECK(has("weight_map puts tensor b.weight in m-1.safetensors, which does not hold it"));
  CHECK(has("tensor n.weight of m-1.safetensors is not in the weight_map"));
  CHECK(has("names m-3.safetensors (1 tensors), which is not in the checkpoint"));
  CHECK(has("metadata.total_size is 5 bytes"));
  CHECK(r.contradicts());
  CHECK(r.exit_code() == 1);
  CHECK_THROWS_AS(make_report(two_shards(), {{"config.json", "{nope"}}, std::nullopt), Error);
}

TEST_CASE("report: files left out on purpose are not missing", "[checkpoint]") {
  json index = {{"metadata", {{"total_size", 1}}},
                {"weight_map",
                 {{"a.weight", "m-1.safetensors"}, {"n.weight", "m-1.safetensors"}, {"c.weight", "m-3.safetensors"}}}};
  auto files = two_shards();
  files.pop_back();
  auto r = make_report(files, {{"model.safetensors.index.json", index.dump()}}, std::nullopt, {"m-3.safetensors"});
  CHECK(r.indexes.at(0).problems.empty());
  CHECK(r.indexes.at(0).not_read == std::vector<std::string>{"m-3.safetensors"});
  CHECK(r.exit_code() == 0);
}

TEST_CASE("fit: matrices split across tp, vectors and routers whole on each GPU", "[checkpoint]") {
  std::vector<FileHeader> files = {
      st("m.safetensors",
         {{"a.weight", "BF16", {1024, 1024}}, {"n.weight", "BF16", {1024}}, {"l.mlp.gate.weight", "BF16", {8, 1024}}})};
  auto f = fit(files, {4, 1u << 20, 2});
  CHECK(f.tp == 2);
  CHECK(f.sharded_bytes == 2u << 20);
  CHECK(f.replicated_bytes == 2048 + 8 * 1024 * 2);
  CHECK(f.weights_per_gpu == (1u << 20) + 2048 + 16384);
  CHECK_FALSE(f.fits);
  CHECK(f.free_per_gpu == -(2048 + 16384));
  auto g = fit(files, {4, 2u << 20, 0});  // tp defaults to the GPUs
  CHECK(g.tp == 4);
  CHECK(g.fits);
  CHECK(g.free_per_gpu == static_cast<std::int64_t>((2u << 20) - (512u << 10) - 2048 - 16384));
  // A request that cannot be planned is a typed problem; fit() refuses it in words that name no flag.
  CHECK(problem_of({4, 1, 2}) == std::nullopt);
  CHECK(problem_of({0, 1, 0}) == FitRequestProblem::no_gpus);
  CHECK(problem_of({3, 1, 2}) == FitRequestProblem::tp_does_not_divide);
  CHECK(problem_of({2, 1, 4}) == FitRequestProblem::tp_does_not_divide);
  CHECK_THROWS_WITH(fit(files, {3, 1, 2}), "a tensor-parallel size of 2 does not divide 3 GPUs");
  CHECK_THROWS_WITH(fit(files, {0, 1, 0}), "a fit needs at least one GPU");
  CHECK_THROWS_AS(fit(files, {2, 1, 4}), Error);
  auto r = make_report(files, {}, FitRequest{4, 1u << 20, 2});
  CHECK(r.exit_code() == 1);
  CHECK(r.to_json()["fit"]["fits"] == false);
}

TEST_CASE("gguf-split: a missing part or a wrong tensor count is a contradiction", "[checkpoint]") {
  auto part = [](std::string path, std::uint64_t no, std::uint64_t tensors) {
    FileHeader h;
    h.path = std::move(path);
    h.format = Format::gguf;
    h.metadata = {{"split.no", no}, {"split.count", 3}, {"split.tensors.count", 6}};
    for (std::uint64_t i = 0; i < tensors; ++i)
      h.tensors.push_back({"t" + std::to_string(no) + std::to_string(i), "Q4_K", {256}, 256, 144, 0});
    return h;
  };
  auto whole = make_report({part("m-00001-of-00003.gguf", 0, 2), part("m-00002-of-00003.gguf", 1, 2),
                            part("m-00003-of-00003.gguf", 2, 2)},
                           {}, std::nullopt);
  CHECK(whole.split_problems.empty());
  CHECK(whole.total.bytes_by_dtype.at("Q4_K") == 6 * 144);
  auto missing = make_report({part("m-00001-of-00003.gguf", 0, 2), part("m-00003-of-00003.gguf", 2, 2)}, {},
                             std::nullopt);
  REQUIRE(missing.split_problems.size() == 1);
  CHECK_THAT(missing.split_problems[0], Catch::Contains("2 of the 3 gguf-split parts"));
  auto counted = make_report({part("m-00001-of-00003.gguf", 0, 2), part("m-00002-of-00003.gguf", 1, 2),
                              part("m-00003-of-00003.gguf", 2, 1)},
                             {}, std::nullopt);
  REQUIRE(counted.split_problems.size() == 1);
  CHECK_THAT(counted.split_problems[0], Catch::Contains("hold 5 tensors, split.tensors.count says 6"));
}

namespace {
// A header as parse_safetensors would give it for a file holding one consistent U8 tensor of `bytes`
// bytes (shape [256, bytes / 256]): the file itself would be 2^60 bytes, so it is built, not parsed.
FileHeader one_huge_tensor(const std::string& path, std::uint64_t bytes) {
  FileHeader h;
  h.path = path;
  h.format = Format::safetensors;
  h.header_bytes = 128;
  h.file_size = 128 + bytes;
  Tensor t;
  t.name = "w";
  t.dtype = "U8";
  t.shape = {256, bytes / 256};
  t.elements = bytes;
  t.bytes = bytes;
  t.offset = 128;
  h.tensors.push_back(t);
  return h;
}
}  // namespace

TEST_CASE("report: sixteen tensors of 2^60 + 256 bytes are refused naming the file, never wrapped to 4096",
          "[checkpoint][checked]") {
  const std::uint64_t each = (1ull << 60) + 256;
  std::vector<FileHeader> files;
  for (int i = 0; i < 16; ++i) files.push_back(one_huge_tensor("m-" + std::to_string(100 + i) + ".safetensors", each));
  try {
    auto r = make_report(files, {}, FitRequest{1, 1ull << 30, 0});
    FAIL("a report was made: total " << r.total.bytes << " bytes, fits " << (r.fit && r.fit->fits));
  } catch (const Error& e) {
    CHECK(e.is(util::SumRefusal::overflow));
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).find("m-115.safetensors") != std::string::npos);  // the file that passed 2^64 - 1
  }
  // fit() alone (as a caller with headers of its own would call it) refuses too.
  CHECK_THROWS_AS(fit(files, FitRequest{1, 1ull << 30, 0}), Error);
  // Fifteen are 15 * (2^60 + 256) bytes, reported as they are; short by more than int64 holds: held at its end.
  files.pop_back();
  auto r = make_report(files, {}, FitRequest{1, 1ull << 30, 0});
  CHECK(r.total.bytes == 15 * each);
  CHECK(r.total.elements == 15 * each);
  CHECK(r.read_bytes == 15 * (each + 128));
  REQUIRE(r.fit);
  CHECK(r.fit->weights_per_gpu == 15 * each);
  CHECK_FALSE(r.fit->fits);
  CHECK(r.fit->free_per_gpu == -INT64_MAX);
  // Split across 8 GPUs, rounded up without passing 2^64 - 1 first.
  auto split = fit(files, FitRequest{8, ~0ull, 8});
  CHECK(split.weights_per_gpu == (15 * each + 7) / 8);
  CHECK(split.fits);
  CHECK(split.free_per_gpu == INT64_MAX);
}

TEST_CASE("report: hf_quant_config.json or a modelopt config.json nested 500,000 deep is refused, naming the file",
          "[checkpoint]") {
  // 1 MB of brackets under "quantization": nlohmann built it, and copying it recursed until the stack ended.
  const std::string deep = std::string(500000, '[') + std::string(500000, ']');
  for (const auto& [file, text] : std::vector<std::pair<std::string, std::string>>{
           {"hf_quant_config.json", R"({"quantization": )" + deep + "}"},
           {"config.json", R"({"quantization_config": {"quant_method": "modelopt", "x": )" + deep + "}}"}}) {
    INFO(file);
    try {
      make_report(two_shards(), {{file, text}}, std::nullopt);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.is(util::JsonRefusal::too_deep));
      CHECK(e.code() == ExitCode::usage);
      CHECK_THAT(e.what(), Catch::StartsWith(file + ": arrays and objects nested deeper than 100 levels"));
    }
  }
}
