#pragma once
// `envbuild create`: make an environment match a lock, in three steps the tool
// calls in turn: read what the plan needs (read_plan_inputs: each lock entry's
// candidate wheels from find-links, pylock paths or simple indexes; the
// installed distributions; the cache), plan (plan.hpp's plan_env: install,
// reinstall, remove, keep, each with its reason), carry the plan out
// (execute_plan).
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "provkit/download/downloader.hpp"
#include "provkit/pyenv/interpreter.hpp"
#include "provkit/pyenv/plan.hpp"
#include "provkit/pyenv/venv.hpp"
#include "provkit/pyspec/lock.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/wheels/cache.hpp"
#include "provkit/wheels/linker.hpp"

namespace provkit::pyenv {

namespace fs = std::filesystem;

struct CreateOptions {
  fs::path env;
  fs::path python;  // resolved interpreter path
  fs::path lock;
  pyspec::LockSelection selection;  // pylock extras and dependency groups
  std::vector<fs::path> find_links;
  std::vector<std::string> index_urls;
  fs::path cache_dir;
  wheels::LinkMode link_mode = wheels::LinkMode::clone;
  bool allow_bad_record = false;
  // A lock that selects nothing while the environment holds distributions
  // would uninstall all of them: refused (usage) unless this is set.
  bool allow_empty = false;
  bool compile = false;
  unsigned jobs = 0;  // 0: default
  // Told of each wheel download (start, progress, retries, finish), from the workers' threads at once: the
  // tool's progress lines. None: downloads are quiet.
  download::Observer* downloads = nullptr;
};

// A wheel installed although its RECORD does not match its content (CreateOptions::allow_bad_record).
struct BadRecord {
  std::string wheel;  // file name
  std::size_t problems = 0;
  std::string first;  // the first problem
};

struct CreateResult {
  std::vector<std::string> installed, removed, unchanged;  // "name==version", as the plan's decisions below
  std::vector<std::string> warnings;
  std::string link_mode;  // the mode actually used, empty when nothing was linked
  Plan plan;              // what was decided, each with its reason, and carried out
  std::vector<BadRecord> bad_records;
};

// `envbuild create --json`: the result for the environment as given, and the seconds it took; "plan" holds
// the typed decisions (plan.hpp's to_json).
nlohmann::json to_json(const CreateResult& r, const std::string& env, double seconds);

// Carries a plan out for the environment `layout` of interpreter `it`: fills the cache (downloads checked while
// they stream, wheels unpacked and checked against RECORD; refused with Error(CreateRefusal::bad_record) unless
// `options.allow_bad_record`), judges every wheel's layout, and only then touches the environment: skeleton,
// removals, installs in parallel, bytecode when asked. `read_for_plan`: cache entries (by sha256) read while
// planning, each moved into the install that uses it rather than read again (a files.json of 49,000 files is most
// of a warm create's reading).
CreateResult execute_plan(const Plan& plan, const Interpreter& it, const VenvLayout& layout,
                          const CreateOptions& options, std::map<std::string, wheels::CacheEntry> read_for_plan = {});

// What planning read, kept to carry the plan out.
struct PlanReading {
  Interpreter interpreter;
  VenvLayout layout;
  PlanInputs inputs;  // for plan_env
  // Cache entries (by sha256) read while looking at the cache's state: execute_plan's `read_for_plan`.
  std::map<std::string, wheels::CacheEntry> cache_entries;
};

// Reads what a plan needs, changing nothing: the interpreter, the lock, the wheels each source offers
// (hashed as far as the choice needs), the distributions installed in `options.env`, the cache's state of
// every wheel the lock allows. `envbuild create` is read_plan_inputs, plan_env (plan.hpp), execute_plan.
PlanReading read_plan_inputs(const CreateOptions& options);

}  // namespace provkit::pyenv
