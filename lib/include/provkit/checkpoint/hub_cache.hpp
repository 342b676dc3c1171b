#pragma once
// The Hugging Face cache as huggingface_hub lays it out and reads it offline, pure paths and reads (no network):
// where the cache is, which names are repository ids, and which snapshot a revision names. hf-fetch fills the
// cache by these rules (hub::hfcache), envcheck plans from it by the same ones.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::checkpoint {

namespace fs = std::filesystem;

// $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
fs::path hf_home();
// $HF_HUB_CACHE, else hf_home()/hub.
fs::path hub_cache_dir();
// The cache llama.cpp's -hf reads (common/hf-cache.cpp): $LLAMA_CACHE, else hub_cache_dir().
fs::path llama_hf_cache_dir();

// HF_HUB_OFFLINE is set true, read the way huggingface_hub reads a boolean: 1, ON, YES or TRUE, in any case.
bool offline_from_env();

// True for "name" or "org/name" with the characters the Hub allows (no "..", "--", no leading or trailing '.'
// or '-', at most 96 a part): a valid id is one folder name in the cache, never a path out of it.
bool is_valid_repo_id(std::string_view id);

// "models--org--name" for type "model" ("datasets--", "spaces--").
std::string cache_folder_name(std::string_view type, std::string_view id);

// A model repository's snapshot in the cache at `revision` ("main" when empty), found as huggingface_hub
// finds it offline (try_to_load_from_cache): refs/<revision> holds the commit, else the revision is the commit.
struct CachedSnapshot {
  fs::path repo_dir;     // <cache>/models--org--name
  std::string revision;  // as looked up
  std::string commit;    // empty when none was found
  fs::path dir;          // <repo_dir>/snapshots/<commit>; empty when none was found
  std::string missing;   // what is not there, in words; empty when found
};
// Error(usage) for a repository id that is not valid or a revision that is not a ref name
// (empty part, "..", absolute, control characters).
CachedSnapshot find_cached_snapshot(const fs::path& cache, std::string_view repo_id, std::string_view revision);

// The GGUF llama.cpp's -hf REPO[:TAG] loads among a snapshot's paths (common/download.cpp, find_best_model):
// the first path, in name order, that is a model GGUF (no mmproj, imatrix, mtp-, eagle3-, dflash-, dspark- in
// its file name; of a gguf-split set only part 1) and holds the tag followed by '.' or '-', case aside; with no
// tag Q4_K_M, then Q8_0, then the first model GGUF. nullopt when none matches.
std::optional<std::string> pick_llama_gguf(std::vector<std::string> paths, std::string_view tag);

}  // namespace provkit::checkpoint
