#pragma once
// Locks envbuild builds from: pip's hash-checking requirements form and
// PEP 751 pylock.toml. Every entry pinned and hashed, or input_error (exit 2)
// naming the file and line.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace provkit::py {

namespace fs = std::filesystem;

// A wheel the lock names explicitly (pylock.toml [[packages.wheels]]).
struct LockedWheel {
  std::string filename;
  std::string url;   // or
  std::string path;  // relative to the lock's directory
  std::optional<std::uint64_t> size;
  std::string sha256;  // hex
};

struct LockEntry {
  std::string name;     // as written
  std::string version;
  std::vector<std::string> sha256;  // accepted wheel hashes, hex
  std::string marker;   // empty: always
  std::vector<LockedWheel> wheels;  // pylock only; empty for requirements
  int line = 0;
};

struct Lock {
  fs::path file;
  std::vector<LockEntry> entries;
  std::vector<std::string> index_urls;  // --index-url / --extra-index-url lines
  std::vector<std::string> find_links;  // --find-links lines
};

// Parses by file name: "pylock.toml" / "pylock.*.toml" as PEP 751, else requirements.
Lock read_lock(const fs::path& file);
Lock parse_requirements(const std::string& text, const fs::path& file);
Lock parse_pylock(const std::string& text, const fs::path& file);

// Entries whose marker is true for `env` (names of skipped ones are dropped).
// A malformed marker is an input_error naming file and line.
std::vector<LockEntry> applicable_entries(const Lock& lock, const std::map<std::string, std::string>& env);

// Writes a requirements lock (sorted by name, one --hash per line) or pylock.toml.
std::string format_requirements(const std::vector<LockEntry>& entries, const std::string& header);
std::string format_pylock(const std::vector<LockEntry>& entries, const std::string& created_by);

}  // namespace provkit::py
