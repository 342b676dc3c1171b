#pragma once
// `envbuild create`: make an environment match a lock. Resolves each lock
// entry to one wheel (find-links, pylock paths, simple index), fills the
// cache, then installs what is missing, replaces what differs (other version
// or drifted files) and removes what the lock does not name.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "provkit/python/interpreter.hpp"
#include "provkit/python/linker.hpp"
#include "provkit/python/lock.hpp"
#include "provkit/python/wheel_name.hpp"

namespace provkit::python {

namespace fs = std::filesystem;

struct CreateOptions {
  fs::path env;
  fs::path python;  // resolved interpreter path
  fs::path lock;
  LockSelection selection;  // pylock extras and dependency groups
  std::vector<fs::path> find_links;
  std::vector<std::string> index_urls;
  fs::path cache_dir;
  LinkMode link_mode = LinkMode::clone;
  bool allow_bad_record = false;
  // A lock that selects nothing while the environment holds distributions
  // would uninstall all of them: refused (usage) unless this is set.
  bool allow_empty = false;
  bool compile = false;
  unsigned jobs = 0;  // 0: default
};

struct CreateResult {
  std::vector<std::string> installed, removed, unchanged;  // "name==version"
  std::vector<std::string> warnings;
  std::string link_mode;  // the mode actually used, empty when nothing was linked
};

// `envbuild create --json`: the result for the environment as given, and the seconds it took.
nlohmann::json to_json(const CreateResult& r, const std::string& env, double seconds);

// A wheel that could satisfy a lock entry.
struct WheelCandidate {
  WheelName wheel;
  fs::path local;      // a file here, or
  std::string url;     // a URL to download
  std::string sha256;  // when the source states it (index fragment, pylock)
  std::optional<std::uint64_t> size;
};

// Picks the best compatible candidate whose hash the entry allows, returned
// with its sha256 filled in. Throws Error(check_failed) naming the package,
// the wheels seen and the tags.
WheelCandidate choose_wheel(const LockEntry& entry, const std::vector<WheelCandidate>& candidates,
                            const std::vector<std::string>& tags,
                            const std::function<std::string(const WheelCandidate&)>& sha256_of);

CreateResult create_env(const CreateOptions& options);

}  // namespace provkit::python
