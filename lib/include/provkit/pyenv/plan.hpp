#pragma once
// `envbuild create`'s plan: a pure function from what was read (the lock, the interpreter's markers and tags,
// the wheels each source offers, the distributions the environment holds, what the cache holds) to what is to
// be done, each decision with its reason. No I/O: every decision is a unit test with no file touched (uv's
// Planner/Plan). create.cpp reads the inputs and carries the plan out.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/pyenv/installed.hpp"
#include "provkit/pyspec/lock.hpp"
#include "provkit/pyspec/package.hpp"
#include "provkit/pyspec/pep440.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/wheels/index.hpp"

namespace provkit::pyenv {

namespace fs = std::filesystem;

// Why a create was refused, for callers to branch on (Error::is). The names are the shared reasons these
// failures always had in --json (docs/json.md), so scripts see no change.
enum class CreateRefusal {
  no_compatible_wheel,  // 1: no wheel of the entry's name and version has a tag the interpreter accepts
  hash_not_locked,      // 1: compatible wheels exist, none has a sha256 the lock allows
  would_empty,          // 2: the lock selects nothing and the environment holds distributions
  bad_record,           // 1: a wheel's RECORD does not match its content (CreateOptions::allow_bad_record)
};
std::string_view reason_name(CreateRefusal r);
ExitCode exit_code(CreateRefusal r);

// The plan speaks in pyspec's names and versions, each normalised or parsed once.
using pyspec::PackageName;
using pyspec::PackageVersion;

// The hash a candidate is chosen by: a local file's own bytes always (a lock's word is not proof), a URL's
// stated hash (checked while it downloads), else the hash its download gave. Empty: not known yet.
std::string choice_hash(const wheels::WheelCandidate& c);

// The candidates of the entry's name and version whose tags the interpreter accepts, best tag first (ties
// in the order given).
std::vector<const wheels::WheelCandidate*> rank_wheels(const pyspec::LockEntry& entry,
                                                       const std::vector<wheels::WheelCandidate>& candidates,
                                                       const std::vector<std::string>& tags);

// Picks the best compatible candidate whose hash the entry allows, returned with its sha256 filled in.
// `sha256_of` gives a candidate's hash and is asked only for the ranked ones, in order, until one is allowed.
// Throws Error(CreateRefusal::no_compatible_wheel) naming the package, the wheels seen and the tags, or
// Error(CreateRefusal::hash_not_locked) naming each compatible wheel's hash.
wheels::WheelCandidate choose_wheel(const pyspec::LockEntry& entry,
                                    const std::vector<wheels::WheelCandidate>& candidates,
                                    const std::vector<std::string>& tags,
                                    const std::function<std::string(const wheels::WheelCandidate&)>& sha256_of);

// What the environment holds of one distribution, as read before planning.
struct InstalledState {
  InstalledDist dist;
  // Its files against its RECORD; read for the distributions the lock pins at the installed version
  // (wants_file_check), nullopt where not read.
  std::optional<DistCheck> files;
  // Its RECORD's rows that have a hash (path as RECORD writes it -> "sha256=..."), for comparing with the
  // chosen wheel's cache entry (read by the same rule); nullopt where not read.
  std::optional<std::map<std::string, std::string>> record;
};

// What the cache holds for one wheel, by its sha256.
struct CacheState {
  // unpacked/<sha256>/ exists. Whether its files are still as unpacked is checked as each is placed
  // (wheels::SourceState): a changed entry is unpacked again then, not here, so no file is looked at twice.
  bool unpacked = false;
  std::map<std::string, std::string> files;  // the unpacked entry's files as in the wheel: path -> "sha256=..."
  std::string dist_info;                     // the entry's "name-1.0.dist-info"
  bool downloaded = false;                   // wheels/<sha256>.whl exists
  // Not unpacked, but the wheel is at hand (a local file, or downloaded): `files` and `dist_info` are its own
  // RECORD's (wheels::read_wheel_record), read to compare an installed distribution with, so that an
  // environment whose cache was wiped is not reinstalled whole.
  bool from_wheel_record = false;
};

// Whether planning needs `installed`'s files and RECORD: the lock (entries selected for this interpreter) pins
// it at the version installed. Readers use it to read no more than the plan looks at.
bool wants_file_check(const InstalledDist& installed, const std::vector<pyspec::LockEntry>& selected);

struct PlanInputs {
  fs::path env;                                // named in messages
  pyspec::Lock lock;                           // as read
  std::map<std::string, std::string> markers;  // the interpreter's marker values
  pyspec::LockSelection selection;             // extras and dependency groups
  std::vector<std::string> tags;               // the interpreter's compatible tags, best first
  // The wheels each source offers, by normalised project name, hashes known as far as they were read
  // (choice_hash: the reader hashes ranked candidates until one is allowed).
  std::map<std::string, std::vector<wheels::WheelCandidate>> candidates;
  std::vector<InstalledState> installed;
  std::map<std::string, CacheState> cache;  // by wheel sha256; absent: the cache holds nothing of it
  bool allow_empty = false;
};

// The wheel selected for one lock entry.
struct SelectedWheel {
  PackageName name;        // the lock entry's
  PackageVersion version;  // the lock entry's pin
  int lock_line = 0;
  wheels::WheelCandidate wheel;  // chosen; its sha256 the hash it was chosen by
  std::string sha256() const { return wheel.sha256; }
};

// How the cache provides a wheel's unpacked files.
enum class CacheStep {
  use_unpacked,          // the entry as it is
  unpack,                // not unpacked yet
  unpack_again_drifted,  // the installed copy drifted, and a hardlinked edit may have reached the entry: unpacked again
};
// Where the wheel's bytes come from when it is unpacked.
enum class WheelSource { local_file, downloaded, download };

struct Fetch {
  CacheStep step = CacheStep::unpack;
  WheelSource source = WheelSource::download;
};

enum class ReinstallReason {
  version_differs,  // another version is installed
  hash_differs,     // the same version, but its files are not the chosen wheel's (another wheel)
  files_drifted,    // the same wheel's files no longer match their RECORD
  not_in_cache,     // the same version, and the chosen wheel is not in the cache to compare its files with
};
enum class RemovalReason {
  not_in_lock,   // no lock entry names it
  marker_false,  // its lock entry's marker (or the selection's extras and groups) leaves it out for this interpreter
};
std::string_view reason_name(ReinstallReason r);
std::string_view reason_name(RemovalReason r);

struct Install {
  SelectedWheel wheel;
  Fetch fetch;
};
struct Reinstall {
  SelectedWheel wheel;
  Fetch fetch;
  InstalledDist installed;
  ReinstallReason reason;
  std::string detail;  // files_drifted: the first drifted path; hash_differs: the first differing path
};
struct Removal {
  InstalledDist installed;
  RemovalReason reason;
  int lock_line = 0;  // marker_false: the entry's line
};
struct Keep {
  SelectedWheel wheel;
  InstalledDist installed;
};

struct Plan {
  std::vector<SelectedWheel> selected;  // one per selected lock entry, in lock order
  std::vector<Install> installs;
  std::vector<Reinstall> reinstalls;
  std::vector<Removal> removals;
  std::vector<Keep> keeps;
  // Whether carrying it out writes nothing (the environment already matches).
  bool nothing_to_do() const { return installs.empty() && reinstalls.empty() && removals.empty(); }
};

// The plan. Throws what selecting and choosing throw (lock errors: input_error / Error(usage or
// check_failed); CreateRefusal::no_compatible_wheel, hash_not_locked), and CreateRefusal::would_empty when
// the lock selects nothing, the environment holds distributions and `allow_empty` is false.
Plan plan_env(const PlanInputs& in);

// One line per decision, with its reason, for the trace ("install demopure 1.0 (demopure-1.0-py3-none-any.whl):
// not installed").
std::vector<std::string> describe(const Plan& plan);

// The plan's decisions for --json: {"install": [...], "reinstall": [...], "remove": [...], "keep": [...]}.
nlohmann::json to_json(const Plan& plan);

}  // namespace provkit::pyenv
