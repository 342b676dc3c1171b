#pragma once
// PEP 440 versions and specifiers as packaging reads them: a version is parsed
// once (strictly: what packaging.version.Version refuses, this refuses) and
// compared as a value; a specifier set is a list of clauses, each checked
// against a version with packaging's rules (wildcards, local labels, the
// pre- and post-release exclusions of < and >).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/error.hpp"

namespace provkit::pyspec {

struct Version {
  // Numbers are kept as digit strings without leading zeros (PEP 440 puts no
  // bound on them), compared by length, then digit by digit.
  std::string epoch = "0";
  std::vector<std::string> release;
  int pre_kind = -1;  // -1 none, 0 a, 1 b, 2 rc
  std::string pre_num;
  std::optional<std::string> post, dev;
  std::vector<std::string> local;  // lower case segments

  bool is_prerelease() const { return pre_kind >= 0 || dev.has_value(); }
  bool is_postrelease() const { return post.has_value(); }
  // The normalised form ("1!2.0rc1.post2.dev3+ubuntu.1").
  std::string str() const;
  // Without the local label.
  Version public_version() const;
};

// nullopt when `text` is not a PEP 440 version (surrounding spaces and a leading
// "v" allowed, case-insensitive, as packaging accepts).
std::optional<Version> parse_version(std::string_view text);
// <0, 0, >0 in PEP 440 order (trailing zeros insignificant: 1.0 == 1.0.0).
int compare(const Version& a, const Version& b);

struct Specifier {
  std::string op;         // === == != ~= <= >= < >
  std::string text;       // the version as written (=== compares it as text)
  Version version;        // unset for ===
  bool wildcard = false;  // == 1.2.* / != 1.2.*
};

// One clause ("~=3.10", "== 3.12.*"); nullopt where packaging's Specifier
// raises InvalidSpecifier.
std::optional<Specifier> parse_specifier(std::string_view text);
// Whether `version` (as written) satisfies the clause; pre-releases allowed.
// A version that is not PEP 440 satisfies nothing but ===.
bool specifier_contains(const Specifier& spec, std::string_view version);

// Why a specifier or marker text was refused, for callers to branch on (Error::is): exit 2, and
// "invalid_input" in --json, as any malformed input.
enum class SyntaxRefusal {
  invalid_specifier,  // packaging's InvalidSpecifier
  invalid_marker,     // InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
};
std::string_view reason_name(SyntaxRefusal r);
ExitCode exit_code(SyntaxRefusal r);

// A comma-separated specifier set; empty clauses are skipped (packaging does).
// Throws Error (SyntaxRefusal::invalid_specifier) naming the clause that is not a specifier.
std::vector<Specifier> parse_specifier_set(std::string_view text);
bool specifier_set_contains(const std::vector<Specifier>& set, std::string_view version);

}  // namespace provkit::pyspec
