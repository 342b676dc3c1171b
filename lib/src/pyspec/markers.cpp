#include "markers.hpp"

#include <algorithm>
#include <cstdint>

#include "provkit/pyspec/pep440.hpp"
#include "provkit/pyspec/wheel_name.hpp"

namespace provkit::pyspec {

namespace {

[[noreturn]] void fail(const std::string& why) { throw Error(SyntaxRefusal::invalid_marker, why); }

bool is_word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The body of a quoted string as Python's ast.literal_eval reads it (packaging
// does exactly that): escapes decoded, unknown escapes kept as written, a
// backslash before the closing quote (`"C:\"`) or a bad \x, \u, \U refused.
std::string python_string(std::string_view body) {
  std::string out;
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\n' || c == '\r' || c == '\0') fail("invalid quoted string (a line break or NUL inside it)");
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 1 >= body.size()) fail("invalid quoted string (a backslash escapes its closing quote)");
    char e = body[++i];
    auto hex = [&](std::size_t digits) {
      std::uint32_t cp = 0;
      for (std::size_t k = 0; k < digits; ++k) {
        int h = i + 1 < body.size() ? hex_value(body[i + 1]) : -1;
        if (h < 0)
          fail(std::string("invalid quoted string (\\") + e + " needs " + std::to_string(digits) + " hex digits)");
        cp = cp * 16 + static_cast<std::uint32_t>(h);
        ++i;
      }
      if (cp > 0x10FFFF) fail("invalid quoted string (a \\U escape past U+10FFFF)");
      append_utf8(out, cp);
    };
    switch (e) {
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': hex(2); break;
      case 'u': hex(4); break;
      case 'U': hex(8); break;
      case 'N': fail("invalid quoted string (\\N{...} escapes are not supported)");
      case '\n':
      case '\r': fail("invalid quoted string (a line break inside it)");
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t cp = static_cast<std::uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
            cp = cp * 8 + static_cast<std::uint32_t>(body[++i] - '0');
          append_utf8(out, cp);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

// packaging's VARIABLE token, with its dotted PEP 345 spellings; the canonical
// name ('.' as '_', python_implementation as platform_python_implementation).
bool canonical_variable(std::string_view written, std::string& name) {
  static const char* const names[] = {"python_version",
                                      "python_full_version",
                                      "os_name",
                                      "os.name",
                                      "sys_platform",
                                      "sys.platform",
                                      "platform_release",
                                      "platform_system",
                                      "platform_version",
                                      "platform.version",
                                      "platform_machine",
                                      "platform.machine",
                                      "platform_python_implementation",
                                      "platform.python_implementation",
                                      "python_implementation",
                                      "implementation_name",
                                      "implementation_version",
                                      "extra",
                                      "extras",
                                      "dependency_groups"};
  if (std::find(std::begin(names), std::end(names), written) == std::end(names)) return false;
  name = std::string(written);
  std::replace(name.begin(), name.end(), '.', '_');
  if (name == "python_implementation") name = "platform_python_implementation";
  return true;
}

bool is_set_var(const std::string& name) { return name == "extras" || name == "dependency_groups"; }
bool is_version_key(const std::string& name) {
  return name == "implementation_version" || name == "platform_release" || name == "python_full_version" ||
         name == "python_version";
}

}  // namespace

// Recursive descent over packaging's grammar, the nesting counted:
//   marker      = marker_atom (BOOLOP marker_atom)*
//   marker_atom = WS? ( '(' WS? marker WS? ')' | marker_item ) WS?
//   marker_item = WS? marker_var WS? marker_op WS? marker_var WS?
class MarkerParser {
 public:
  explicit MarkerParser(std::string_view s) : s_(s) {}

  Marker run() {
    m_.nodes_.emplace_back();  // the root, filled last
    Marker::Node root = group();
    if (i_ != s_.size()) fail("expected the end of the marker at '" + std::string(s_.substr(i_, 20)) + "'");
    m_.nodes_[0] = std::move(root);
    return std::move(m_);
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  // The run of word characters at the position, if it starts on a word boundary.
  std::string_view word() const {
    if (i_ > 0 && is_word(s_[i_ - 1])) return {};
    std::size_t j = i_;
    while (j < s_.size() && is_word(s_[j])) ++j;
    return s_.substr(i_, j - i_);
  }
  Marker::Node group() {
    Marker::Node g;
    g.any_of.emplace_back();
    g.any_of.back().push_back(atom());
    for (;;) {
      auto w = word();
      if (w != "and" && w != "or") break;
      i_ += w.size();
      if (w == "or") g.any_of.emplace_back();
      g.any_of.back().push_back(atom());
    }
    return g;
  }
  int atom() {
    ws();
    int node;
    if (i_ < s_.size() && s_[i_] == '(') {
      if (++depth_ > max_marker_depth)
        fail("parentheses nest deeper than " + std::to_string(max_marker_depth) + " levels in the marker");
      ++i_;
      ws();
      Marker::Node g = group();
      ws();
      if (i_ >= s_.size() || s_[i_] != ')') fail("expected ')' to close the marker expression");
      ++i_;
      --depth_;
      m_.nodes_.push_back(std::move(g));
      node = static_cast<int>(m_.nodes_.size() - 1);
    } else {
      Marker::Atom a;
      ws();
      var(a.lhs_var, a.lhs);
      ws();
      op(a.op);
      ws();
      var(a.rhs_var, a.rhs);
      // PEP 685: an extra compared with a string compares normalised names;
      // so does the literal of a set membership.
      if (a.lhs_var && a.lhs == "extra" && !a.rhs_var) a.rhs = normalize_name(a.rhs);
      if (a.rhs_var && (a.rhs == "extra" || is_set_var(a.rhs)) && !a.lhs_var) a.lhs = normalize_name(a.lhs);
      m_.atoms_.push_back(std::move(a));
      Marker::Node n;
      n.atom = static_cast<int>(m_.atoms_.size() - 1);
      m_.nodes_.push_back(std::move(n));
      node = static_cast<int>(m_.nodes_.size() - 1);
    }
    ws();
    return node;
  }
  void var(bool& is_var, std::string& out) {
    if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"')) {
      auto end = s_.find(s_[i_], i_ + 1);
      if (end == std::string_view::npos) fail("expected a marker variable or quoted string (the quote is not closed)");
      out = python_string(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      return;
    }
    std::size_t j = i_;
    if (i_ > 0 && is_word(s_[i_ - 1])) j = s_.size() + 1;  // no word boundary
    while (j < s_.size() && (is_word(s_[j]) || s_[j] == '.')) ++j;
    std::string_view written = j <= s_.size() ? s_.substr(i_, j - i_) : std::string_view();
    if (written.empty() || !canonical_variable(written, out)) {
      std::string shown(written.empty() ? s_.substr(i_, 20) : written.substr(0, 60));
      fail(shown.empty() ? "expected a marker variable or quoted string at the end of the marker"
                         : "expected a marker variable or quoted string at '" + shown + "'");
    }
    is_var = true;
    i_ = j;
  }
  void op(std::string& out) {
    for (const char* o : {"===", "==", "~=", "!=", "<=", ">=", "<", ">"}) {
      std::string_view sv(o);
      if (s_.substr(i_, sv.size()) == sv) {
        out = o;
        i_ += sv.size();
        return;
      }
    }
    auto w = word();
    if (w == "in") {
      out = "in";
      i_ += 2;
      return;
    }
    if (w == "not") {
      i_ += 3;
      std::size_t before = i_;
      ws();
      if (i_ == before || word() != "in") fail("expected 'in' after 'not' in the marker");
      i_ += 2;
      out = "not in";
      return;
    }
    fail("expected a marker operator (<=, <, !=, ==, >=, >, ~=, ===, in, not in) at '" +
         std::string(s_.substr(i_, 20)) + "'");
  }

  std::string_view s_;
  std::size_t i_ = 0, depth_ = 0;
  Marker m_;
};

Marker Marker::parse(std::string_view text) { return MarkerParser(text).run(); }

struct Marker::Scope {
  const std::map<std::string, std::string>& env;
  MarkerContext context;
  const MarkerSets* sets;
};

namespace {

const std::set<std::string> no_names;

// packaging's _eval_op: a version comparison where `op rhs` is a specifier,
// else the string table (< and > never hold, <= and >= are equality).
bool eval_op(const std::string& lhs, const std::string& op, const std::string& rhs, const std::string& key) {
  if (is_version_key(key))
    if (auto spec = parse_specifier(op + rhs)) return specifier_contains(*spec, lhs);
  if (op == "in") return rhs.find(lhs) != std::string::npos;
  if (op == "not in") return rhs.find(lhs) == std::string::npos;
  if (op == "<" || op == ">") return false;
  if (op == "<=" || op == ">=" || op == "==") return lhs == rhs;
  if (op == "!=") return lhs != rhs;
  fail("undefined comparison: '" + lhs.substr(0, 60) + "' " + op + " '" + rhs.substr(0, 60) + "'" +
       (is_version_key(key) ? " is not a version comparison" : " (" + op + " needs versions)"));
}

}  // namespace

bool Marker::eval_atom(const Atom& a, const Scope& scope) const {
  // As packaging: the key is the left side's variable, else the right side's
  // text (a string compared with a string looks the right one up).
  const std::string& key = a.lhs_var ? a.lhs : a.rhs;
  const std::set<std::string>* set = nullptr;
  std::string value;
  if (is_set_var(key)) {
    if (scope.context != MarkerContext::lock_file)
      fail("'" + key + "' is a pylock.toml package marker variable (PEP 751); it is not defined here");
    set = scope.sets ? (key == "extras" ? &scope.sets->extras : &scope.sets->dependency_groups) : &no_names;
  } else if (key == "extra") {
    if (scope.context != MarkerContext::metadata)
      fail("'extra' is not defined in a pylock.toml marker (PEP 751 writes 'NAME' in extras)");
    auto it = scope.env.find("extra");
    value = it == scope.env.end() ? "" : normalize_name(it->second);
  } else {
    auto it = scope.env.find(key);
    if (it == scope.env.end()) fail("unknown marker variable '" + key.substr(0, 60) + "'");
    value = it->second;
    if (key == "python_full_version" && !value.empty() && value.back() == '+') value += "local";
  }
  if (a.lhs_var) {
    if (set) fail("'" + key + "' is a set: write 'NAME' in " + key + " or 'NAME' not in " + key);
    return eval_op(value, a.op, a.rhs, key);
  }
  if (set) {
    if (a.op == "in" || a.op == "not in") return (set->count(a.lhs) > 0) == (a.op == "in");
    if (a.op == "!=") return true;
    if (a.op == "==" || a.op == "<" || a.op == ">" || a.op == "<=" || a.op == ">=") return false;
    fail("undefined comparison: " + a.op + " on the set '" + key + "'");
  }
  return eval_op(a.lhs, a.op, value, key);
}

bool Marker::eval(int node, const Scope& scope) const {
  const Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.atom >= 0) return eval_atom(atoms_[static_cast<std::size_t>(n.atom)], scope);
  // Every atom is evaluated, as packaging does: an undefined comparison is an
  // error wherever it stands.
  bool any = false;
  for (auto& run : n.any_of) {
    bool all = true;
    for (int k : run) all = eval(k, scope) && all;
    any = any || all;
  }
  return any;
}

bool Marker::evaluate(const std::map<std::string, std::string>& env, MarkerContext context,
                      const MarkerSets* sets) const {
  return eval(0, Scope{env, context, sets});
}

bool evaluate_marker(std::string_view marker, const std::map<std::string, std::string>& env, const MarkerSets* sets) {
  return Marker::parse(marker).evaluate(env, sets ? MarkerContext::lock_file : MarkerContext::metadata, sets);
}

bool version_matches(std::string_view version, std::string_view specifiers) {
  return specifier_set_contains(parse_specifier_set(specifiers), version);
}

}  // namespace provkit::pyspec
