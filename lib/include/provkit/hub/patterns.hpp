#pragma once
// Repo path patterns as `hf download --include/--exclude` reads them: huggingface_hub's filter_repo_objects
// (src/huggingface_hub/utils/_paths.py, v1.28.0), the one rule behind --include, --exclude, inspect --include
// and --assemble OUT=GLOB.
//  - `\` is `/`, in the pattern and in the path;
//  - a pattern that ends in `/` means everything under that folder: `original/` is `original/*`;
//  - then Python's fnmatch.fnmatchcase (fnmatch.translate): case-sensitive, `*` any run of characters `/`
//    included, `?` one character (a code point, not a byte), `[...]` one character of a set with ranges,
//    `[!...]` negated, `^` a literal (`[^c]` is `^` or `c`), no escape character, an unclosed `[` a literal,
//    and the set corners of translate (`[a-]`, `[-a]`, `[b-a]` empty, `[!b-a]` any character).
// Text is matched as code points; a byte that is not part of valid UTF-8 is one character of its own (as
// Python's surrogateescape reads it).
#include <string>
#include <string_view>
#include <vector>

namespace provkit::hub {

class RepoPattern {
 public:
  explicit RepoPattern(std::string_view pattern);
  bool matches(std::string_view path) const;

 private:
  struct Range {
    char32_t lo, hi;
  };
  struct Item {
    enum class Kind { literal, any, set, star } kind;
    char32_t literal = 0;
    bool negated = false;
    std::vector<Range> ranges;  // kind set: an empty set, not negated, matches nothing
    bool accepts(char32_t c) const;
  };
  std::vector<Item> items_;
};

// Whether `path` is chosen by one of the `include` patterns (all paths when none is given) and by none of the
// `exclude` patterns: filter_repo_objects' allow_patterns and ignore_patterns.
bool selected_by_patterns(std::string_view path, const std::vector<std::string>& include,
                          const std::vector<std::string>& exclude);

}  // namespace provkit::hub
