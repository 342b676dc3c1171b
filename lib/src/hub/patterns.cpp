#include "provkit/hub/patterns.hpp"

#include <algorithm>

#include "provkit/util/text.hpp"

namespace provkit::hub {

namespace {

// `s` as code points, `\` read as `/` (huggingface_hub's _normalize_separators); a byte outside valid UTF-8 as
// U+DC80..U+DCFF, the code point Python's surrogateescape gives it.
std::u32string code_points(std::string_view s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    long c = util::next_code_point(s, i);
    if (c < 0) c = 0xDC00 + static_cast<unsigned char>(s[i - 1]);
    out.push_back(c == '\\' ? U'/' : static_cast<char32_t>(c));
  }
  return out;
}

// One character of a set's body after fnmatch.translate: `raw` characters are what re reads as syntax (a `-`
// between two of them makes a range); the others were escaped by translate and are literals.
struct SetChar {
  char32_t c;
  bool raw;
};

// fnmatch.translate's body of a set with a `-` in it: cut into chunks at the dashes that make ranges, ranges
// whose ends are out of order dropped (with the dash), the chunks joined by raw dashes.
std::vector<SetChar> ranged_set_body(const std::u32string& pat, std::size_t i, std::size_t j) {
  std::vector<std::u32string> chunks;
  std::size_t k = pat[i] == U'!' ? i + 2 : i + 1;
  while (true) {
    auto dash = k < j ? pat.find(U'-', k) : std::u32string::npos;
    if (dash == std::u32string::npos || dash >= j) break;
    chunks.push_back(pat.substr(i, dash - i));
    i = dash + 1;
    k = dash + 3;
  }
  std::u32string last = pat.substr(i, j - i);
  if (!last.empty()) chunks.push_back(last);
  else chunks.back() += U'-';
  for (std::size_t n = chunks.size() - 1; n > 0; --n) {
    if (chunks[n - 1].back() > chunks[n].front()) {
      chunks[n - 1] = chunks[n - 1].substr(0, chunks[n - 1].size() - 1) + chunks[n].substr(1);
      chunks.erase(chunks.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }
  std::vector<SetChar> body;
  for (std::size_t n = 0; n < chunks.size(); ++n) {
    if (n > 0) body.push_back({U'-', true});
    for (char32_t c : chunks[n]) body.push_back({c, c != U'\\' && c != U'-'});
  }
  return body;
}

}  // namespace

bool RepoPattern::Item::accepts(char32_t c) const {
  switch (kind) {
    case Kind::literal: return c == literal;
    case Kind::any: return true;
    case Kind::set: {
      bool in = std::any_of(ranges.begin(), ranges.end(), [c](const Range& r) { return r.lo <= c && c <= r.hi; });
      return in != negated;
    }
    case Kind::star: break;
  }
  return false;
}

RepoPattern::RepoPattern(std::string_view pattern) {
  std::u32string pat = code_points(pattern);
  if (!pat.empty() && pat.back() == U'/') pat += U'*';  // _add_wildcard_to_directories
  const std::size_t n = pat.size();
  for (std::size_t i = 0; i < n;) {
    char32_t c = pat[i++];
    if (c == U'*') {
      if (items_.empty() || items_.back().kind != Item::Kind::star) items_.push_back({Item::Kind::star});
      continue;
    }
    if (c == U'?') {
      items_.push_back({Item::Kind::any});
      continue;
    }
    std::size_t j = i;
    if (c == U'[') {
      if (j < n && pat[j] == U'!') ++j;
      if (j < n && pat[j] == U']') ++j;
      while (j < n && pat[j] != U']') ++j;
    }
    if (c != U'[' || j >= n) {  // an unclosed `[` is a literal, as every other character
      Item lit{Item::Kind::literal};
      lit.literal = c;
      items_.push_back(lit);
      continue;
    }
    std::vector<SetChar> body;
    if (pat.find(U'-', i) >= j) {
      for (std::size_t k = i; k < j; ++k) body.push_back({pat[k], pat[k] != U'\\'});
    } else {
      body = ranged_set_body(pat, i, j);
    }
    for (auto& s : body)
      if (s.c == U'&' || s.c == U'~' || s.c == U'|') s.raw = false;  // translate escapes set operations
    i = j + 1;
    Item set{Item::Kind::set};
    if (body.size() == 1 && body[0].raw && body[0].c == U'!') {
      items_.push_back({Item::Kind::any});  // a negated empty set: any character
      continue;
    }
    std::size_t k = 0;
    if (!body.empty() && body[0].raw && body[0].c == U'!') {
      set.negated = true;
      k = 1;
    }
    // The rest as re reads a class: X-Y a range where the dash is raw, a dash before the end a literal.
    while (k < body.size()) {
      char32_t lo = body[k++].c;
      if (k < body.size() && body[k].raw && body[k].c == U'-') {
        ++k;
        if (k == body.size()) {
          set.ranges.push_back({lo, lo});
          set.ranges.push_back({U'-', U'-'});
          break;
        }
        char32_t hi = body[k++].c;
        if (hi < lo) {  // re would refuse the pattern; translate never builds one, so this is only a guard
          set.ranges.clear();
          set.negated = false;
          break;
        }
        set.ranges.push_back({lo, hi});
      } else {
        set.ranges.push_back({lo, lo});
      }
    }
    items_.push_back(set);
  }
}

bool RepoPattern::matches(std::string_view path_text) const {
  const std::u32string path = code_points(path_text);
  // The glob walk: on a mismatch, the last `*` takes one more character. A `*` followed by a fixed run takes
  // its earliest match, as translate's atomic groups do.
  std::size_t p = 0, s = 0, star_item = std::string::npos, star_from = 0;
  while (s < path.size()) {
    if (p < items_.size() && items_[p].kind == Item::Kind::star) {
      star_item = p++;
      star_from = s;
    } else if (p < items_.size() && items_[p].accepts(path[s])) {
      ++p;
      ++s;
    } else if (star_item != std::string::npos) {
      p = star_item + 1;
      s = ++star_from;
    } else {
      return false;
    }
  }
  while (p < items_.size() && items_[p].kind == Item::Kind::star) ++p;
  return p == items_.size();
}

bool selected_by_patterns(std::string_view path, const std::vector<std::string>& include,
                          const std::vector<std::string>& exclude) {
  auto any = [path](const std::vector<std::string>& patterns) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [path](const std::string& p) { return RepoPattern(p).matches(path); });
  };
  return (include.empty() || any(include)) && !any(exclude);
}

}  // namespace provkit::hub
