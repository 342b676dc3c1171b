#pragma once
// PEP 508 environment markers ("python_version >= '3.8' and sys_platform == 'linux'")
// parsed and evaluated as packaging.markers does: the same grammar (the legacy
// names os.name, sys.platform, platform.version, platform.machine,
// platform.python_implementation and python_implementation included), strings
// read as Python literals (escapes, "C:\" refused), version comparisons only
// where `op value` is a valid PEP 440 specifier, else packaging's string rules.
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/pyspec/pep440.hpp"  // SyntaxRefusal

namespace provkit::pyspec {

// PEP 751's set-valued marker variables, meaningful only in pylock.toml:
// `'cli' in extras`, `'dev' not in dependency_groups`. Names normalised
// (normalize_name), as the comparison is.
struct MarkerSets {
  std::set<std::string> extras, dependency_groups;
};

// Parentheses nest at most this deep (packaging stops at Python's recursion
// limit; a bound here keeps a hostile marker from exhausting the stack).
inline constexpr std::size_t max_marker_depth = 100;

// What a marker is evaluated for, as packaging's `context`: a requirement
// file's line or a wheel's metadata (`extra` is ""), a pylock.toml's
// `environments` (neither `extra` nor the sets are defined) or a pylock.toml
// package's `marker` (`extras` and `dependency_groups` are, `extra` is not).
enum class MarkerContext { metadata, requirement, lock_file };

class Marker {
 public:
  // Throws Error (SyntaxRefusal::invalid_marker, pep440.hpp) with a short reason when the marker is malformed.
  static Marker parse(std::string_view text);

  // `env` holds the interpreter's marker values; `sets` the lock_file
  // context's extras and groups (empty sets when null). Throws Error
  // (SyntaxRefusal::invalid_marker) where packaging raises UndefinedComparison
  // or UndefinedEnvironmentName.
  bool evaluate(const std::map<std::string, std::string>& env, MarkerContext context = MarkerContext::metadata,
                const MarkerSets* sets = nullptr) const;

  struct Atom {
    bool lhs_var = false, rhs_var = false;
    std::string lhs, op, rhs;  // a variable's canonical name, or a string's value
  };
  // A node is an atom or a group: `or` of `and`-runs of nodes.
  struct Node {
    int atom = -1;                         // index into atoms_, or -1 for a group
    std::vector<std::vector<int>> any_of;  // group: OR over AND-lists of node indices
  };

 private:
  struct Scope;
  bool eval(int node, const Scope& scope) const;
  bool eval_atom(const Atom& atom, const Scope& scope) const;
  std::vector<Atom> atoms_;
  std::vector<Node> nodes_;  // nodes_[0] is the root
  friend class MarkerParser;
};

// Marker::parse(marker).evaluate(env, sets ? lock_file : metadata, sets).
bool evaluate_marker(std::string_view marker, const std::map<std::string, std::string>& env,
                     const MarkerSets* sets = nullptr);

// A PEP 440 specifier set (">=3.9, <3.14", "== 3.12.*", "~=3.10") against a
// version, as packaging's SpecifierSet.contains with pre-releases allowed.
// Throws Error (SyntaxRefusal::invalid_specifier) when the set is malformed.
bool version_matches(std::string_view version, std::string_view specifiers);

}  // namespace provkit::pyspec
