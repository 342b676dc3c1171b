#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "provkit/checkpoint/hub_cache.hpp"
#include "provkit/error.hpp"

#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::checkpoint;
namespace fs = std::filesystem;

namespace {
using provkit::test::TempDir;
const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

// Sets an environment variable for a scope, the old value put back after.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  const char* name_;
  std::optional<std::string> old_;
};
}  // namespace

TEST_CASE("hub cache: llama.cpp's -hf cache is LLAMA_CACHE, else the Hub cache", "[hub_cache]") {
  ScopedEnv hub("HF_HUB_CACHE", "/explicit"), llama("LLAMA_CACHE", nullptr);
  CHECK(hub_cache_dir() == fs::path("/explicit"));
  CHECK(llama_hf_cache_dir() == fs::path("/explicit"));
  ScopedEnv set("LLAMA_CACHE", "/llama");
  CHECK(llama_hf_cache_dir() == fs::path("/llama"));
  CHECK(hub_cache_dir() == fs::path("/explicit"));
}

TEST_CASE("hub cache: folder names and repository ids", "[hub_cache]") {
  CHECK(cache_folder_name("model", "org/name") == "models--org--name");
  CHECK(cache_folder_name("dataset", "d") == "datasets--d");
  CHECK(is_valid_repo_id("Qwen/Qwen3-8B"));
  CHECK(is_valid_repo_id("gpt2"));
  for (const char* bad : {"", "../x", "/abs/x", "a/b/c", "a/..", "a--b/c", ".x/y", "a/b "})
    CHECK_FALSE(is_valid_repo_id(bad));
  CHECK_FALSE(is_valid_repo_id(std::string(97, 'a') + "/b"));
}

TEST_CASE("hub cache: a revision's snapshot, as huggingface_hub finds it offline", "[hub_cache]") {
  TempDir t("hub-cache");
  const fs::path repo = t / "models--org--name";
  t.write("models--org--name/refs/main", kCommit + "\n");
  t.write("models--org--name/refs/bad", "not a commit");
  t.write("models--org--name/snapshots/" + kCommit + "/config.json", "{}");
  auto main = find_cached_snapshot(t.path, "org/name", "");
  CHECK(main.revision == "main");
  CHECK(main.commit == kCommit);
  CHECK(main.dir == repo / "snapshots" / kCommit);
  CHECK(main.missing.empty());
  // A commit named as the revision: its folder directly.
  CHECK(find_cached_snapshot(t.path, "org/name", kCommit).dir == main.dir);
  auto v2 = find_cached_snapshot(t.path, "org/name", "v2");
  CHECK(v2.dir.empty());
  CHECK(v2.missing.find("no ref v2") != std::string::npos);
  CHECK(find_cached_snapshot(t.path, "org/name", "bad").missing.find("holds no commit id") != std::string::npos);
  auto other = find_cached_snapshot(t.path, "org/other", "main");
  CHECK(other.dir.empty());
  CHECK(other.missing.find("models--org--other is not there") != std::string::npos);
  // A commit the refs name but no snapshot holds.
  t.write("models--org--name/refs/gone", std::string(40, 'f'));
  CHECK(find_cached_snapshot(t.path, "org/name", "gone").missing.find("no snapshot") != std::string::npos);
  // Names that would leave the cache are refused, never looked up.
  CHECK_THROWS_AS(find_cached_snapshot(t.path, "../x", "main"), Error);
  for (const char* rev : {"../../x", "/etc", "a//b", "a/./b", "a\nb"})
    CHECK_THROWS_AS(find_cached_snapshot(t.path, "org/name", rev), Error);
  CHECK(find_cached_snapshot(t.path, "org/name", "refs/pr/1").missing.find("no ref refs/pr/1") != std::string::npos);
}

TEST_CASE("hub cache: the GGUF llama.cpp's -hf picks for a tag", "[hub_cache]") {
  const std::vector<std::string> paths = {"README.md",
                                          "mmproj-M-Q8_0.gguf",
                                          "M-Q8_0.gguf",
                                          "M-Q4_K_M.gguf",
                                          "sub/M-IQ4_XS.gguf",
                                          "M.imatrix.gguf",
                                          "big/M-Q6_K-00002-of-00002.gguf",
                                          "big/M-Q6_K-00001-of-00002.gguf"};
  CHECK(pick_llama_gguf(paths, "Q8_0") == "M-Q8_0.gguf");  // the mmproj is never the model
  CHECK(pick_llama_gguf(paths, "q4_k_m") == "M-Q4_K_M.gguf");
  CHECK(pick_llama_gguf(paths, "IQ4_XS") == "sub/M-IQ4_XS.gguf");
  CHECK(pick_llama_gguf(paths, "Q6_K") == "big/M-Q6_K-00001-of-00002.gguf");  // a split set by its first part
  CHECK(pick_llama_gguf(paths, "") == "M-Q4_K_M.gguf");                       // Q4_K_M, then Q8_0
  CHECK(pick_llama_gguf({"M-Q8_0.gguf", "M-F16.gguf"}, "") == "M-Q8_0.gguf");
  CHECK(pick_llama_gguf({"b-F16.gguf", "a-BF16.gguf"}, "") == "a-BF16.gguf");  // else the first by name
  CHECK(pick_llama_gguf(paths, "Q5_K_M") == std::nullopt);
  CHECK(pick_llama_gguf(paths, "Q4_K") == std::nullopt);  // the tag must end at '.' or '-'
  CHECK(pick_llama_gguf({"mmproj-F16.gguf"}, "") == std::nullopt);
}
