#pragma once
// PEP 508 environment markers ("python_version >= '3.8' and sys_platform == 'linux'")
// evaluated against an interpreter's marker values.
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace provkit::python {

// PEP 751's set-valued marker variables, meaningful only in pylock.toml:
// `'cli' in extras`, `'dev' not in dependency_groups`. Names normalised
// (normalize_name), as the comparison is.
struct MarkerSets {
  std::set<std::string> extras, dependency_groups;
};

// Throws std::invalid_argument with a short reason when the marker is malformed;
// callers add file and line. `extra` evaluates as "" (locks are flat).
// `extras` / `dependency_groups` need `sets` (a pylock); without it they are
// refused as unknown outside a pylock.toml.
bool evaluate_marker(std::string_view marker, const std::map<std::string, std::string>& env,
                     const MarkerSets* sets = nullptr);

// A PEP 440 specifier set (">=3.9, <3.14", "== 3.12.*", "~=3.10") against a
// version, with the operators markers use. Throws std::invalid_argument when
// the set is malformed.
bool version_matches(std::string_view version, std::string_view specifiers);

}  // namespace provkit::python
