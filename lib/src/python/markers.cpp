#include "provkit/python/markers.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <vector>

#include "provkit/python/wheel_name.hpp"

namespace provkit::python {

namespace {

struct Token {
  enum Kind { string, name, op, lparen, rparen, end } kind;
  std::string text;
};

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '(' || c == ')') {
      out.push_back({c == '(' ? Token::lparen : Token::rparen, std::string(1, c)});
      ++i;
    } else if (c == '\'' || c == '"') {
      auto end = s.find(c, i + 1);
      if (end == std::string_view::npos) throw std::invalid_argument("unterminated string in marker");
      out.push_back({Token::string, std::string(s.substr(i + 1, end - i - 1))});
      i = end + 1;
    } else if (c == '<' || c == '>' || c == '=' || c == '!' || c == '~') {
      std::size_t j = i + 1;
      while (j < s.size() && (s[j] == '=' )) ++j;
      out.push_back({Token::op, std::string(s.substr(i, j - i))});
      i = j;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.')) ++j;
      out.push_back({Token::name, std::string(s.substr(i, j - i))});
      i = j;
    } else {
      throw std::invalid_argument(std::string("unexpected character '") + c + "' in marker");
    }
  }
  out.push_back({Token::end, ""});
  return out;
}

bool is_version_var(const std::string& name) {
  return name == "python_version" || name == "python_full_version" || name == "implementation_version";
}

bool looks_like_version(const std::string& s) {
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0]));
}

bool compare(const std::string& lhs, const std::string& op, const std::string& rhs, bool versions) {
  if (op == "in") return rhs.find(lhs) != std::string::npos;
  if (op == "not in") return rhs.find(lhs) == std::string::npos;
  if (op == "===") return lhs == rhs;
  if (versions && looks_like_version(lhs) && looks_like_version(rhs)) {
    if (op == "~=") {
      // ~=X.Y.Z means >=X.Y.Z and ==X.Y.*
      auto dot = rhs.rfind('.');
      if (dot == std::string::npos) throw std::invalid_argument("~= needs a version with a dot");
      std::string prefix = rhs.substr(0, dot);
      return compare_versions(lhs, rhs) >= 0 && (lhs == prefix || lhs.rfind(prefix + ".", 0) == 0);
    }
    if ((op == "==" || op == "!=") && rhs.size() > 2 && rhs.substr(rhs.size() - 2) == ".*") {
      std::string prefix = rhs.substr(0, rhs.size() - 2);
      bool match = lhs == prefix || lhs.rfind(prefix + ".", 0) == 0;
      return op == "==" ? match : !match;
    }
    int c = compare_versions(lhs, rhs);
    if (op == "==") return c == 0;
    if (op == "!=") return c != 0;
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    if (op == ">=") return c >= 0;
  } else {
    if (op == "==") return lhs == rhs;
    if (op == "!=") return lhs != rhs;
    if (op == "<") return lhs < rhs;
    if (op == "<=") return lhs <= rhs;
    if (op == ">") return lhs > rhs;
    if (op == ">=") return lhs >= rhs;
    if (op == "~=") throw std::invalid_argument("~= needs versions");
  }
  throw std::invalid_argument("unknown operator '" + op + "' in marker");
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::map<std::string, std::string>& env, const MarkerSets* sets)
      : t_(std::move(tokens)), env_(env), sets_(sets) {}

  bool parse() {
    bool v = parse_or();
    if (t_[i_].kind != Token::end) throw std::invalid_argument("unexpected '" + t_[i_].text + "' in marker");
    return v;
  }

 private:
  bool parse_or() {
    bool v = parse_and();
    while (t_[i_].kind == Token::name && t_[i_].text == "or") {
      ++i_;
      bool r = parse_and();
      v = v || r;
    }
    return v;
  }
  bool parse_and() {
    bool v = parse_atom();
    while (t_[i_].kind == Token::name && t_[i_].text == "and") {
      ++i_;
      bool r = parse_atom();
      v = v && r;
    }
    return v;
  }
  bool parse_atom() {
    if (t_[i_].kind == Token::lparen) {
      ++i_;
      bool v = parse_or();
      if (t_[i_].kind != Token::rparen) throw std::invalid_argument("missing ')' in marker");
      ++i_;
      return v;
    }
    bool lhs_var = false, rhs_var = false;
    std::string lhs_name, rhs_name;
    std::string lhs = value(lhs_var, lhs_name);
    std::string op;
    if (t_[i_].kind == Token::op) {
      op = t_[i_++].text;
    } else if (t_[i_].kind == Token::name && t_[i_].text == "in") {
      op = "in";
      ++i_;
    } else if (t_[i_].kind == Token::name && t_[i_].text == "not" && t_[i_ + 1].kind == Token::name &&
               t_[i_ + 1].text == "in") {
      op = "not in";
      i_ += 2;
    } else {
      throw std::invalid_argument("expected an operator in marker after '" + lhs + "'");
    }
    if (t_[i_].kind == Token::name && is_set_var(t_[i_].text)) {
      const std::string var = t_[i_++].text;
      if (!sets_) throw std::invalid_argument("'" + var + "' is a pylock.toml marker variable (PEP 751)");
      if (lhs_var || (op != "in" && op != "not in"))
        throw std::invalid_argument("'" + var + "' is a set: write 'NAME' in " + var + " or 'NAME' not in " + var);
      const auto& set = var == "extras" ? sets_->extras : sets_->dependency_groups;
      bool member = set.count(normalize_name(lhs)) > 0;
      return op == "in" ? member : !member;
    }
    std::string rhs = value(rhs_var, rhs_name);
    bool versions = (lhs_var && is_version_var(lhs_name)) || (rhs_var && is_version_var(rhs_name));
    return compare(lhs, op, rhs, versions);
  }
  std::string value(bool& is_var, std::string& name) {
    const Token& tok = t_[i_];
    if (tok.kind == Token::string) {
      ++i_;
      return tok.text;
    }
    if (tok.kind == Token::name) {
      ++i_;
      is_var = true;
      name = tok.text;
      if (name == "platform.python_implementation") name = "platform_python_implementation";
      if (name == "os.name") name = "os_name";
      if (name == "sys.platform") name = "sys_platform";
      if (name == "extra") return "";
      if (is_set_var(name))
        throw std::invalid_argument("'" + name + "' is a set: write 'NAME' in " + name + " or 'NAME' not in " + name);
      auto it = env_.find(name);
      if (it == env_.end()) throw std::invalid_argument("unknown marker variable '" + name + "'");
      return it->second;
    }
    throw std::invalid_argument("expected a value in marker");
  }

  static bool is_set_var(const std::string& name) { return name == "extras" || name == "dependency_groups"; }

  std::vector<Token> t_;
  const std::map<std::string, std::string>& env_;
  const MarkerSets* sets_;
  std::size_t i_ = 0;
};

}  // namespace

bool evaluate_marker(std::string_view marker, const std::map<std::string, std::string>& env, const MarkerSets* sets) {
  return Parser(tokenize(marker), env, sets).parse();
}

bool version_matches(std::string_view version, std::string_view specifiers) {
  const std::string v(version), all(specifiers);
  if (all.find_first_not_of(" \t") == std::string::npos) return true;  // no constraint
  static const char* const ops[] = {"===", "==", "!=", "<=", ">=", "~=", "<", ">"};
  std::size_t start = 0;
  for (;;) {
    auto comma = all.find(',', start);
    std::string clause = all.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    clause.erase(0, clause.find_first_not_of(" \t"));
    clause.erase(clause.find_last_not_of(" \t") + 1);
    auto op_end = clause.find_first_not_of("<>=!~");
    std::string op = clause.substr(0, op_end == std::string::npos ? clause.size() : op_end);
    std::string rhs = op_end == std::string::npos ? "" : clause.substr(op_end);
    rhs.erase(0, rhs.find_first_not_of(" \t"));
    if (std::find(std::begin(ops), std::end(ops), op) == std::end(ops) || !looks_like_version(rhs) ||
        rhs.find_first_of(" \t") != std::string::npos)
      throw std::invalid_argument("'" + clause + "' in '" + all + "' is not a version specifier");
    if (!compare(v, op, rhs, true)) return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

}  // namespace provkit::python
