// A Python-syntax regular expression compiled to a Thompson NFA and run as a Pike VM (regex.hpp): the set
// of states alive at each character, each state once, so a match costs at most (program size) x (text
// length) steps whatever the pattern, and nothing recurses on the text.
#include "provkit/util/regex.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "provkit/util/text.hpp"

namespace provkit::util {

namespace {

constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_word(char32_t c) {
  return c >= 0x80 || is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// Python's str.isspace(), which is what \s matches in a str pattern.
bool is_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
  return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
         c == 0x202f || c == 0x205f || c == 0x3000;
}

// One character test: ranges and the shorthand classes, possibly negated. `.` is "not \n".
struct CharClass {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  bool digit = false, not_digit = false, word = false, not_word = false, space = false, not_space = false;
  bool negated = false;
  bool contains(char32_t c) const {
    bool in = std::any_of(ranges.begin(), ranges.end(), [c](const auto& r) { return c >= r.first && c <= r.second; });
    in = in || (digit && is_digit(c)) || (not_digit && !is_digit(c)) || (word && is_word(c)) ||
         (not_word && !is_word(c)) || (space && is_space(c)) || (not_space && !is_space(c));
    return in != negated;
  }
};

enum class Assertion { text_start, text_end, end_or_final_newline, word_boundary, not_word_boundary };

struct Node {
  enum Kind { empty, chars, assertion, concat, alternation, repeat } kind = empty;
  std::size_t char_class = 0;
  Assertion assertion_kind = Assertion::text_start;
  std::vector<Node> children;
  std::size_t min = 0, max = 0;
};

struct Refused {
  RegexError error;
};

}  // namespace

struct Regex::Program {
  enum Op : std::uint8_t { chars, split, jump, assertion, match };
  struct Inst {
    Op op = match;
    std::uint32_t x = 0, y = 0;  // chars: the class; split: both targets; jump: the target
    Assertion assertion_kind = Assertion::text_start;
  };
  std::vector<Inst> code;
  std::vector<CharClass> classes;
};

namespace {

using Program = Regex::Program;

class Parser {
 public:
  Parser(std::string_view pattern, const RegexLimits& limits, Program& program) : limits_(limits), program_(program) {
    for (std::size_t i = 0; i < pattern.size();) {
      const std::size_t at = i;
      const long cp = next_code_point(pattern, i);
      if (cp < 0) fail(RegexRefusal::syntax, at, "bytes that are not UTF-8");
      text_.push_back(static_cast<char32_t>(cp));
      offsets_.push_back(at);
    }
    offsets_.push_back(pattern.size());
  }

  Node parse() {
    Node n = alternation();
    if (pos_ < text_.size()) fail(RegexRefusal::syntax, pos_, "an unbalanced parenthesis");
    return n;
  }

  [[noreturn]] void fail(RegexRefusal reason, std::size_t at_char, std::string why) const {
    throw Refused{{reason, offsets_[std::min(at_char, offsets_.size() - 1)], std::move(why)}};
  }

 private:
  bool more() const { return pos_ < text_.size(); }
  char32_t peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : 0; }
  bool take(char32_t c) {
    if (!more() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  std::size_t add_class(CharClass c) {
    program_.classes.push_back(std::move(c));
    return program_.classes.size() - 1;
  }
  Node chars_node(CharClass c) {
    Node n;
    n.kind = Node::chars;
    n.char_class = add_class(std::move(c));
    return n;
  }
  static CharClass literal(char32_t c) {
    CharClass k;
    k.ranges.emplace_back(c, c);
    return k;
  }

  Node alternation() {
    Node first = sequence();
    if (!more() || peek() != '|') return first;
    Node alt;
    alt.kind = Node::alternation;
    alt.children.push_back(std::move(first));
    while (take('|')) alt.children.push_back(sequence());
    return alt;
  }

  Node sequence() {
    Node seq;
    seq.kind = Node::concat;
    while (more() && peek() != '|' && peek() != ')') {
      auto atom = this->atom();
      if (!atom) continue;  // a comment
      quantify(*atom);
      seq.children.push_back(std::move(*atom));
    }
    return seq;
  }

  // Reads a {m,n} at pos_ as Python does: anything else there is a literal '{'.
  bool counted(std::size_t& min, std::size_t& max) {
    const std::size_t here = pos_;
    if (peek() != '{' || peek(1) == '}') return false;
    ++pos_;
    auto digits = [&](std::string& out) {
      while (more() && is_digit(peek())) out += static_cast<char>(text_[pos_++]);
    };
    std::string lo, hi;
    digits(lo);
    if (take(',')) digits(hi);
    else hi = lo;
    if (!take('}')) {
      pos_ = here;
      return false;
    }
    auto number = [&](const std::string& s, std::size_t fallback) {
      if (s.empty()) return fallback;
      if (s.size() > 9) fail(RegexRefusal::too_large, here, "a repeat count of " + s);
      return static_cast<std::size_t>(std::stoul(s));
    };
    min = number(lo, 0);
    max = number(hi, kUnbounded);
    if (max < min) fail(RegexRefusal::syntax, here, "a minimum repeat greater than the maximum");
    return true;
  }

  void quantify(Node& atom) {
    bool quantified = false;
    for (;;) {
      const std::size_t at = pos_;
      std::size_t min = 0, max = 0;
      if (peek() == '*' && more()) ++pos_, min = 0, max = kUnbounded;
      else if (peek() == '+' && more()) ++pos_, min = 1, max = kUnbounded;
      else if (peek() == '?' && more()) ++pos_, min = 0, max = 1;
      else if (!counted(min, max)) return;
      if (quantified) fail(RegexRefusal::syntax, at, "a multiple repeat");
      if (atom.kind == Node::assertion) fail(RegexRefusal::syntax, at, "nothing to repeat");
      if (take('+')) fail(RegexRefusal::unsupported, at, "a possessive quantifier");
      take('?');  // lazy: the same matches exist, only Python's choice among them differs
      Node r;
      r.kind = Node::repeat;
      r.min = min;
      r.max = max;
      r.children.push_back(std::move(atom));
      atom = std::move(r);
      quantified = true;
    }
  }

  std::optional<Node> atom() {
    const std::size_t at = pos_;
    const char32_t c = text_[pos_++];
    switch (c) {
      case '*':
      case '+':
      case '?': fail(RegexRefusal::syntax, at, "nothing to repeat");
      case '{': {
        --pos_;
        std::size_t min = 0, max = 0;
        if (counted(min, max)) fail(RegexRefusal::syntax, at, "nothing to repeat");
        ++pos_;
        return chars_node(literal('{'));
      }
      case '.': {
        CharClass k;
        k.ranges.emplace_back(U'\n', U'\n');
        k.negated = true;
        return chars_node(std::move(k));
      }
      case '^': return assertion(Assertion::text_start);
      case '$': return assertion(Assertion::end_or_final_newline);
      case '[': return char_class(at);
      case '(': return group(at);
      case ')': fail(RegexRefusal::syntax, at, "an unbalanced parenthesis");
      case '\\': return escape(at);
      default: return chars_node(literal(c));
    }
  }

  Node assertion(Assertion a) {
    Node n;
    n.kind = Node::assertion;
    n.assertion_kind = a;
    return n;
  }

  std::optional<Node> group(std::size_t at) {
    if (take('?')) {
      if (take(':')) return group_body(at);
      if (take('#')) {
        while (more() && peek() != ')') ++pos_;
        if (!take(')')) fail(RegexRefusal::syntax, at, "a comment that is not closed");
        return std::nullopt;
      }
      if (peek() == 'P' && peek(1) == '<') {
        pos_ += 2;
        const std::size_t name_at = pos_;
        while (more() && peek() != '>') ++pos_;
        if (!more() || pos_ == name_at) fail(RegexRefusal::syntax, at, "a group name that is not closed");
        for (std::size_t k = name_at; k < pos_; ++k)
          if (!(is_word(text_[k]) && !(k == name_at && is_digit(text_[k]))))
            fail(RegexRefusal::syntax, k, "a group name that is not an identifier");
        ++pos_;
        return group_body(at);
      }
      if (peek() == 'P' && peek(1) == '=') fail(RegexRefusal::unsupported, at, "a backreference (?P=name)");
      if (peek() == '=' || peek() == '!' || (peek() == '<' && (peek(1) == '=' || peek(1) == '!')))
        fail(RegexRefusal::unsupported, at, "a lookahead or lookbehind");
      if (peek() == '(') fail(RegexRefusal::unsupported, at, "a conditional group");
      fail(RegexRefusal::unsupported, at, "an inline flag or group extension (?...)");
    }
    return group_body(at);
  }

  Node group_body(std::size_t at) {
    if (++depth_ > limits_.nesting)
      fail(RegexRefusal::too_large, at, "groups nested more than " + std::to_string(limits_.nesting) + " deep");
    Node inner = alternation();
    if (!take(')')) fail(RegexRefusal::syntax, at, "a missing ), an unterminated subpattern");
    --depth_;
    return inner;
  }

  // \d and its kin into `k`; false when `c` is not one of them.
  static bool shorthand(char32_t c, CharClass& k) {
    switch (c) {
      case 'd': return k.digit = true;
      case 'D': return k.not_digit = true;
      case 'w': return k.word = true;
      case 'W': return k.not_word = true;
      case 's': return k.space = true;
      case 'S': return k.not_space = true;
      default: return false;
    }
  }

  std::uint32_t hex_digits(std::size_t count, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const char32_t h = peek();
      int d = is_digit(h)              ? int(h - '0')
              : (h >= 'a' && h <= 'f') ? int(h - 'a' + 10)
              : (h >= 'A' && h <= 'F') ? int(h - 'A' + 10)
                                       : -1;
      if (!more() || d < 0) fail(RegexRefusal::syntax, at, "an incomplete hexadecimal escape");
      v = v * 16 + static_cast<std::uint32_t>(d);
      ++pos_;
    }
    if (v > 0x10ffff) fail(RegexRefusal::syntax, at, "an escape beyond Unicode");
    return v;
  }

  // One escaped character (not a class, not an assertion): in a class or out of it.
  char32_t escaped_char(char32_t c, std::size_t at, bool in_class) {
    switch (c) {
      case 'a': return 7;
      case 'f': return '\f';
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'v': return '\v';
      case 'x': return hex_digits(2, at);
      case 'u': return hex_digits(4, at);
      case 'U': return hex_digits(8, at);
      case 'b':
        if (in_class) return 8;
        break;
      case '0': {  // up to two more octal digits
        std::uint32_t v = 0;
        for (int k = 0; k < 2 && peek() >= '0' && peek() <= '7' && more(); ++k) v = v * 8 + (text_[pos_++] - '0');
        return v;
      }
      case 'N': fail(RegexRefusal::unsupported, at, "a named character \\N{...}");
      default: break;
    }
    if (c >= '1' && c <= '9')
      fail(RegexRefusal::unsupported, at, in_class ? "an octal escape" : "a backreference or octal escape");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
      fail(RegexRefusal::syntax, at, "a bad escape \\" + std::string(1, char(c)));
    return c;
  }

  Node escape(std::size_t at) {
    if (!more()) fail(RegexRefusal::syntax, at, "a trailing backslash");
    const char32_t c = text_[pos_++];
    CharClass k;
    if (shorthand(c, k)) return chars_node(std::move(k));
    switch (c) {
      case 'A': return assertion(Assertion::text_start);
      case 'Z': return assertion(Assertion::text_end);
      case 'b': return assertion(Assertion::word_boundary);
      case 'B': return assertion(Assertion::not_word_boundary);
      default: return chars_node(literal(escaped_char(c, at, false)));
    }
  }

  Node char_class(std::size_t at) {
    CharClass k;
    if (take('^')) k.negated = true;
    bool first = true;
    for (;;) {
      if (!more()) fail(RegexRefusal::syntax, at, "an unterminated character set");
      const std::size_t item_at = pos_;
      char32_t c = text_[pos_++];
      if (c == ']' && !first) break;
      first = false;
      char32_t lo = c;
      if (c == '\\') {
        if (!more()) fail(RegexRefusal::syntax, item_at, "an unterminated character set");
        const char32_t e = text_[pos_++];
        if (shorthand(e, k)) {
          if (peek() == '-' && peek(1) != ']' && pos_ + 1 < text_.size())
            fail(RegexRefusal::syntax, item_at, "a bad character range");
          continue;
        }
        lo = escaped_char(e, item_at, true);
      }
      char32_t hi = lo;
      if (peek() == '-' && more() && pos_ + 1 < text_.size() && peek(1) != ']') {
        ++pos_;
        const std::size_t hi_at = pos_;
        char32_t h = text_[pos_++];
        if (h == '\\') {
          if (!more()) fail(RegexRefusal::syntax, hi_at, "an unterminated character set");
          const char32_t e = text_[pos_++];
          CharClass ignored;
          if (shorthand(e, ignored)) fail(RegexRefusal::syntax, item_at, "a bad character range");
          h = escaped_char(e, hi_at, true);
        }
        if (h < lo) fail(RegexRefusal::syntax, item_at, "a bad character range");
        hi = h;
      }
      k.ranges.emplace_back(lo, hi);
    }
    return chars_node(std::move(k));
  }

  const RegexLimits& limits_;
  Program& program_;
  std::vector<char32_t> text_;
  std::vector<std::size_t> offsets_;  // of each code point in the pattern's bytes, and its end
  std::size_t pos_ = 0, depth_ = 0;
};

class Compiler {
 public:
  Compiler(Program& p, std::size_t limit, const Parser& parser) : p_(p), limit_(limit), parser_(parser) {}

  void emit(const Node& n) {
    switch (n.kind) {
      case Node::empty: return;
      case Node::chars: push({Program::chars, static_cast<std::uint32_t>(n.char_class), 0, {}}); return;
      case Node::assertion: push({Program::assertion, 0, 0, n.assertion_kind}); return;
      case Node::concat:
        for (const auto& c : n.children) emit(c);
        return;
      case Node::alternation: {
        std::vector<std::size_t> jumps;
        for (std::size_t k = 0; k < n.children.size(); ++k) {
          if (k + 1 == n.children.size()) {
            emit(n.children[k]);
            break;
          }
          const std::size_t split = push({Program::split, 0, 0, {}});
          p_.code[split].x = here();
          emit(n.children[k]);
          jumps.push_back(push({Program::jump, 0, 0, {}}));
          p_.code[split].y = here();
        }
        for (auto j : jumps) p_.code[j].x = here();
        return;
      }
      case Node::repeat: {
        const Node& body = n.children.front();
        for (std::size_t k = 0; k < n.min; ++k) emit(body);
        if (n.max == kUnbounded) {
          const std::size_t split = push({Program::split, 0, 0, {}});
          p_.code[split].x = here();
          emit(body);
          push({Program::jump, static_cast<std::uint32_t>(split), 0, {}});
          p_.code[split].y = here();
          return;
        }
        std::vector<std::size_t> splits;
        for (std::size_t k = n.min; k < n.max; ++k) {
          splits.push_back(push({Program::split, 0, 0, {}}));
          p_.code[splits.back()].x = here();
          emit(body);
        }
        for (auto s : splits) p_.code[s].y = here();
        return;
      }
    }
  }
  void finish() { push({Program::match, 0, 0, {}}); }

 private:
  std::uint32_t here() const { return static_cast<std::uint32_t>(p_.code.size()); }
  std::size_t push(Program::Inst i) {
    if (p_.code.size() >= limit_)
      parser_.fail(RegexRefusal::too_large, 0,
                   "a program of more than " + std::to_string(limit_) + " steps (counted repeats unrolled)");
    p_.code.push_back(i);
    return p_.code.size() - 1;
  }
  Program& p_;
  std::size_t limit_;
  const Parser& parser_;
};

// What the assertions look at, between two characters of the text.
struct Place {
  bool start = false, end = false, final_newline = false;  // final_newline: only a '\n' is left
  bool word_before = false, word_after = false;
};

bool holds(Assertion a, const Place& at) {
  switch (a) {
    case Assertion::text_start: return at.start;
    case Assertion::text_end: return at.end;
    case Assertion::end_or_final_newline: return at.end || at.final_newline;
    case Assertion::word_boundary: return at.word_before != at.word_after;
    case Assertion::not_word_boundary: return at.word_before == at.word_after;
  }
  return false;
}

// The states reached from `pc` without reading a character, added to `list` once each (`seen` holds the
// generation a state was last added in). True when the match state is among them.
bool add_states(const Program& p, std::uint32_t pc, const Place& at, std::vector<std::uint32_t>& list,
                std::vector<std::uint32_t>& seen, std::uint32_t generation, std::vector<std::uint32_t>& stack,
                std::uint64_t& steps) {
  bool matched = false;
  stack.clear();
  stack.push_back(pc);
  while (!stack.empty()) {
    const std::uint32_t s = stack.back();
    stack.pop_back();
    if (seen[s] == generation) continue;
    seen[s] = generation;
    ++steps;
    const auto& inst = p.code[s];
    switch (inst.op) {
      case Program::chars: list.push_back(s); break;
      case Program::match: matched = true; break;
      case Program::jump: stack.push_back(inst.x); break;
      case Program::split:
        stack.push_back(inst.y);
        stack.push_back(inst.x);
        break;
      case Program::assertion:
        if (holds(inst.assertion_kind, at)) stack.push_back(s + 1);
        break;
    }
  }
  return matched;
}

}  // namespace

std::variant<Regex, RegexError> Regex::compile(std::string_view pattern, const RegexLimits& limits) {
  if (pattern.size() > limits.pattern_bytes)
    return RegexError{RegexRefusal::too_long, limits.pattern_bytes,
                      "a pattern of " + std::to_string(pattern.size()) + " bytes (at most " +
                          std::to_string(limits.pattern_bytes) + ")"};
  auto program = std::make_shared<Program>();
  try {
    Parser parser(pattern, limits, *program);
    Node root = parser.parse();
    Compiler compiler(*program, limits.program_size, parser);
    compiler.emit(root);
    compiler.finish();
  } catch (const Refused& r) {
    return r.error;
  }
  return Regex(std::move(program));
}

std::size_t Regex::program_size() const { return program_->code.size(); }

bool Regex::match_prefix(std::string_view text, std::uint64_t* steps_out) const {
  const Program& p = *program_;
  std::vector<std::uint32_t> current, next, seen(p.code.size(), 0), stack;
  std::uint32_t generation = 1;
  std::uint64_t steps = 0;
  // The character at byte `i` (a byte that is not part of UTF-8 stands for itself, above Unicode).
  auto decode = [&](std::size_t& i) -> char32_t {
    const std::size_t at = i;
    const long cp = next_code_point(text, i);
    if (cp >= 0) return static_cast<char32_t>(cp);
    i = at + 1;
    return 0x110000u + static_cast<unsigned char>(text[at]);
  };
  std::size_t i = 0;
  char32_t before = 0;
  bool has_before = false;
  auto place_here = [&](std::size_t at, bool has_next, char32_t after, std::size_t after_end) {
    Place pl;
    pl.start = at == 0;
    pl.end = !has_next;
    pl.final_newline = has_next && after == '\n' && after_end == text.size();
    pl.word_before = has_before && is_word(before);
    pl.word_after = has_next && is_word(after);
    return pl;
  };
  std::size_t after_end = i;
  char32_t after = i < text.size() ? decode(after_end) : 0;
  bool matched = add_states(p, 0, place_here(0, i < text.size(), after, after_end), current, seen, generation, stack,
                            steps);
  while (!matched && !current.empty() && i < text.size()) {
    const char32_t c = after;
    i = after_end;
    before = c;
    has_before = true;
    after_end = i;
    const bool has_next = i < text.size();
    after = has_next ? decode(after_end) : 0;
    const Place pl = place_here(i, has_next, after, after_end);
    ++generation;
    next.clear();
    for (std::uint32_t s : current) {
      ++steps;
      if (p.classes[p.code[s].x].contains(c) && add_states(p, s + 1, pl, next, seen, generation, stack, steps)) {
        matched = true;
        break;
      }
    }
    std::swap(current, next);
  }
  if (steps_out) *steps_out += steps;
  return matched;
}

}  // namespace provkit::util
