#pragma once
// Locks envbuild builds from: pip's hash-checking requirements form and
// PEP 751 pylock.toml. Every entry pinned and hashed, or an Error with its
// LockRefusal (exit 2) naming the file and line.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "provkit/error.hpp"

namespace provkit::pyspec {

namespace fs = std::filesystem;

// Why a lock was refused, for callers to branch on (Error::is). In --json these are the shared reasons they
// always had (docs/json.md): invalid_input (exit 2) for a lock that is wrong, asks for what envbuild does not
// do or does not offer the selection, check_failed (exit 1) for a sound lock that does not admit this
// interpreter.
enum class LockRefusal {
  not_found,             // no such lock file
  malformed,             // not readable as its format: syntax, a missing or mistyped value, an unknown option,
                         // too large or too deeply nested, a PEP 751 lock under another file name
  not_pinned,            // not name==version: a range, a wildcard, a URL requirement, an editable
  unhashed,              // an entry (or the selected entry's wheels) without a sha256
  weak_hash,             // md5/sha1/sha224, another algorithm, or a sha256 that is not 64 hex digits
  duplicate,             // one name locked twice (for one marker, or selected twice for this environment)
  unsupported,           // what envbuild does not do: included files, --no-binary over an entry, an entry
                         // with only an sdist, a directory or a VCS checkout
  invalid_marker,        // an environment marker packaging refuses
  invalid_specifier,     // a requires-python packaging refuses
  no_such_selection,     // --extra/--group the lock does not offer, or on a requirements file
  python_mismatch,       // the lock's or a selected entry's requires-python excludes the interpreter (exit 1)
  environment_mismatch,  // the lock's environments exclude the interpreter (exit 1)
};
std::string_view reason_name(LockRefusal r);
ExitCode exit_code(LockRefusal r);

// A wheel the lock names explicitly (pylock.toml [[packages.wheels]]).
struct LockedWheel {
  std::string filename;
  std::string url;   // or
  std::string path;  // relative to the lock's directory
  std::optional<std::uint64_t> size;
  std::string sha256;  // hex
};

struct LockEntry {
  std::string name;  // as written
  std::string version;
  std::vector<std::string> sha256;  // accepted wheel hashes, hex
  std::string marker;               // empty: always
  std::vector<LockedWheel> wheels;  // pylock only; empty for requirements
  int line = 0;
  std::string requires_python;  // pylock [[packages]] requires-python; empty: any
  // Why envbuild cannot install this entry (only an sdist or a directory, a
  // wheel without a sha256), refused only when the entry is selected: an
  // entry for another platform may have nothing envbuild can use.
  std::string unusable;
  int unusable_line = 0;
  LockRefusal unusable_reason = LockRefusal::unsupported;  // or unhashed, weak_hash, not_pinned
};

struct Lock {
  fs::path file;
  bool pylock = false;
  std::vector<LockEntry> entries;
  std::vector<std::string> index_urls;  // --index-url / --extra-index-url lines
  std::vector<std::string> find_links;  // --find-links lines
  // PEP 751 top level (pylock only), each with the line it is on.
  std::string requires_python;
  int requires_python_line = 0;
  std::vector<std::string> environments;  // markers; one must be true
  bool has_environments = false;          // `environments = []` admits no interpreter
  int environments_line = 0;
  std::vector<std::string> extras, dependency_groups, default_groups;
};

// What to install from a multi-use pylock: `--extra NAME`, `--group NAME`.
// As PEP 751 says, extras default to none and groups to `default-groups`;
// `no_default_groups` leaves those out.
struct LockSelection {
  std::vector<std::string> extras, groups;
  bool no_default_groups = false;
};

// PEP 751's file names: "pylock.toml" or "pylock.NAME.toml", NAME without dots.
bool is_pylock_name(const fs::path& file);

// Parses by file name: "pylock.toml" / "pylock.*.toml" as PEP 751, else
// requirements; a PEP 751 lock under another name is refused (the name is
// part of the standard), saying what it must be.
Lock read_lock(const fs::path& file);
Lock parse_requirements(const std::string& text, const fs::path& file);
Lock parse_pylock(const std::string& text, const fs::path& file);

// The entries to install for the interpreter whose marker values are `env`,
// following PEP 751's installer steps: the lock's requires-python and
// environments must admit the interpreter (else python_mismatch or
// environment_mismatch, exit 1), entries whose marker is false are skipped
// (markers see `selection`'s extras and groups), a selected entry's
// requires-python must admit it, and one name may be selected once
// (duplicate). An extra or group the lock does not offer, or a selection on a
// requirements file, is no_such_selection; a malformed marker or specifier
// invalid_marker or invalid_specifier; a selected entry envbuild cannot
// install its unusable_reason: each naming file and line.
std::vector<LockEntry> applicable_entries(const Lock& lock, const std::map<std::string, std::string>& env,
                                          const LockSelection& selection = {});

// Writes a requirements lock (sorted by name, one --hash per line) or pylock.toml.
std::string format_requirements(const std::vector<LockEntry>& entries, const std::string& header);
std::string format_pylock(const std::vector<LockEntry>& entries, const std::string& created_by);

}  // namespace provkit::pyspec
