#pragma once
// Regular expressions from outside (a checkpoint's config.json: compressed-tensors' "re:" targets and ignore
// lists), matched in time linear in the name: a Thompson NFA run as a Pike VM, never backtracking, so
// `(a|aa)*c` or `.*x` on a 400 KB name costs (pattern size) x (name length) steps and no stack.
//
// The syntax is Python's `re` (compressed-tensors and vLLM match with re.match), less what a linear engine
// cannot do or names do not need: literals and escapes (\n \t \xhh \uhhhh ... and escaped punctuation),
// `.`, classes `[...]` with ranges and negation, \d \w \s \D \W \S, groups (capturing, (?:...),
// (?P<name>...), (?#...)), `|`, `* + ? {m} {m,} {,n} {m,n}` and their lazy forms, and the assertions
// ^ $ \A \Z \b \B. Names are compared as Unicode code points; \d \s are ASCII's and \w is ASCII's letters,
// digits and '_' plus every non-ASCII code point (Python's Unicode classes without its tables: tensor names
// are ASCII). Refused with a reason: backreferences, lookaround, conditionals, inline flags, possessive
// quantifiers, \N{...}, and what Python itself refuses (a bad escape, nothing to repeat, an unbalanced
// parenthesis, a bad range).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace provkit::util {

// Why a pattern is not compiled.
enum class RegexRefusal {
  too_long,     // longer than RegexLimits::pattern_bytes
  too_large,    // its program (counted repeats unrolled) is over RegexLimits::program_size, or nests too deep
  syntax,       // Python's re refuses it too
  unsupported,  // valid Python, but not something a linear matcher does (backreference, lookaround, ...)
};

struct RegexError {
  RegexRefusal reason = RegexRefusal::syntax;
  std::size_t at = 0;  // byte offset in the pattern
  std::string why;     // "a backreference (\1)"
};

struct RegexLimits {
  std::size_t pattern_bytes = 1024;
  std::size_t program_size = 8192;  // NFA instructions
  std::size_t nesting = 64;         // groups inside groups
};

class Regex {
 public:
  // The pattern compiled, or why not.
  static std::variant<Regex, RegexError> compile(std::string_view pattern, const RegexLimits& limits = {});

  // Python's re.match(pattern, text) is not None: some prefix of `text` matches. `steps`, when given, is
  // increased by the work done (threads stepped), for a caller's budget. Text that is not valid UTF-8 is
  // compared byte for byte where a byte is not part of a character.
  bool match_prefix(std::string_view text, std::uint64_t* steps = nullptr) const;

  std::size_t program_size() const;

  struct Program;

 private:
  explicit Regex(std::shared_ptr<const Program> p) : program_(std::move(p)) {}
  std::shared_ptr<const Program> program_;
};

}  // namespace provkit::util
