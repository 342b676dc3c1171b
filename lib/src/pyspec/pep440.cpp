#include "provkit/pyspec/pep440.hpp"

#include <algorithm>
#include <cctype>

namespace provkit::pyspec {

std::string_view reason_name(SyntaxRefusal) { return reason_name(Reason::invalid_input); }
ExitCode exit_code(SyntaxRefusal) { return ExitCode::usage; }

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum_lower(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }
bool is_sep(char c) { return c == '-' || c == '_' || c == '.'; }

std::string strip_zeros(std::string_view digits) {
  std::size_t i = 0;
  while (i + 1 < digits.size() && digits[i] == '0') ++i;
  return std::string(digits.substr(i));
}

int compare_numbers(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

bool all_digits(const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

// A scanner over the lower-cased text, one PEP 440 part at a time; each part
// either matches whole or leaves the position where it was (packaging's
// VERSION_PATTERN, written out).
struct Scanner {
  std::string s;
  std::size_t i = 0;

  bool digits(std::string& out) {
    std::size_t j = i;
    while (j < s.size() && is_digit(s[j])) ++j;
    if (j == i) return false;
    out = strip_zeros(std::string_view(s).substr(i, j - i));
    i = j;
    return true;
  }
  bool word(std::string_view w) {
    if (s.compare(i, w.size(), w) != 0) return false;
    i += w.size();
    return true;
  }
  void sep() {
    if (i < s.size() && is_sep(s[i])) ++i;
  }
  // [-_.]? WORD [-_.]? [0-9]*, one of `words` (longest listed first).
  bool labelled(std::initializer_list<std::pair<std::string_view, int>> words, int& kind, std::string& num) {
    std::size_t save = i;
    sep();
    for (auto& [w, k] : words)
      if (word(w)) {
        kind = k;
        sep();  // greedy, as the pattern is: "1.0a." is 1.0a0
        if (!digits(num)) num = "0";
        return true;
      }
    i = save;
    return false;
  }
};

}  // namespace

std::optional<Version> parse_version(std::string_view text) {
  Scanner sc;
  sc.s.reserve(text.size());
  for (char c : text) sc.s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto& s = sc.s;
  auto& i = sc.i;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i < s.size() && s[i] == 'v') ++i;
  Version v;
  std::string n;
  if (!sc.digits(n)) return std::nullopt;
  if (i < s.size() && s[i] == '!') {
    v.epoch = n;
    ++i;
    if (!sc.digits(n)) return std::nullopt;
  }
  v.release.push_back(n);
  while (i + 1 < s.size() && s[i] == '.' && is_digit(s[i + 1])) {
    ++i;
    sc.digits(n);
    v.release.push_back(n);
  }
  int kind = -1;
  std::string num;
  if (sc.labelled({{"alpha", 0}, {"beta", 1}, {"preview", 2}, {"pre", 2}, {"rc", 2}, {"a", 0}, {"b", 1}, {"c", 2}},
                  kind, num)) {
    v.pre_kind = kind;
    v.pre_num = num;
  }
  if (i + 1 < s.size() && s[i] == '-' && is_digit(s[i + 1])) {
    ++i;
    sc.digits(num);
    v.post = num;
  } else if (sc.labelled({{"post", 0}, {"rev", 0}, {"r", 0}}, kind, num)) {
    v.post = num;
  }
  if (sc.labelled({{"dev", 0}}, kind, num)) v.dev = num;
  if (i < s.size() && s[i] == '+') {
    ++i;
    std::size_t start = i;
    for (;;) {
      std::size_t j = i;
      while (j < s.size() && is_alnum_lower(s[j])) ++j;
      if (j == i) return std::nullopt;
      std::string seg = s.substr(i, j - i);
      v.local.push_back(all_digits(seg) ? strip_zeros(seg) : seg);
      i = j;
      if (i + 1 < s.size() && is_sep(s[i]) && is_alnum_lower(s[i + 1])) {
        ++i;
        continue;
      }
      break;
    }
    if (i == start) return std::nullopt;
  }
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i != s.size()) return std::nullopt;
  return v;
}

std::string Version::str() const {
  std::string out = epoch == "0" ? "" : epoch + "!";
  for (std::size_t k = 0; k < release.size(); ++k) out += (k ? "." : "") + release[k];
  if (pre_kind >= 0) out += std::string(pre_kind == 0 ? "a" : pre_kind == 1 ? "b" : "rc") + pre_num;
  if (post) out += ".post" + *post;
  if (dev) out += ".dev" + *dev;
  for (std::size_t k = 0; k < local.size(); ++k) out += (k ? "." : "+") + local[k];
  return out;
}

Version Version::public_version() const {
  Version v = *this;
  v.local.clear();
  return v;
}

int compare(const Version& a, const Version& b) {
  if (int c = compare_numbers(a.epoch, b.epoch)) return c;
  std::size_t n = std::max(a.release.size(), b.release.size());
  static const std::string zero = "0";
  for (std::size_t k = 0; k < n; ++k) {
    const std::string& x = k < a.release.size() ? a.release[k] : zero;
    const std::string& y = k < b.release.size() ? b.release[k] : zero;
    if (int c = compare_numbers(x, y)) return c;
  }
  // packaging's _cmpkey: a dev release of a final sorts before its pre-releases,
  // no pre-release after them; no post before any post; no dev after any dev;
  // no local before any local.
  auto pre_rank = [](const Version& v) { return v.pre_kind >= 0 ? v.pre_kind : (!v.post && v.dev) ? -2 : 3; };
  if (pre_rank(a) != pre_rank(b)) return pre_rank(a) < pre_rank(b) ? -1 : 1;
  if (a.pre_kind >= 0)
    if (int c = compare_numbers(a.pre_num, b.pre_num)) return c;
  if (a.post.has_value() != b.post.has_value()) return a.post ? 1 : -1;
  if (a.post)
    if (int c = compare_numbers(*a.post, *b.post)) return c;
  if (a.dev.has_value() != b.dev.has_value()) return a.dev ? -1 : 1;
  if (a.dev)
    if (int c = compare_numbers(*a.dev, *b.dev)) return c;
  if (a.local.empty() != b.local.empty()) return a.local.empty() ? -1 : 1;
  for (std::size_t k = 0; k < std::min(a.local.size(), b.local.size()); ++k) {
    const auto &x = a.local[k], &y = b.local[k];
    bool xn = all_digits(x), yn = all_digits(y);
    if (xn != yn) return xn ? 1 : -1;  // numeric segments sort after alphanumeric ones
    int c = xn ? compare_numbers(x, y) : x.compare(y);
    if (c) return c < 0 ? -1 : 1;
  }
  if (a.local.size() != b.local.size()) return a.local.size() < b.local.size() ? -1 : 1;
  return 0;
}

std::optional<Specifier> parse_specifier(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string_view s = text.substr(b, e - b);
  Specifier spec;
  for (const char* op : {"===", "==", "!=", "~=", "<=", ">=", "<", ">"})
    if (s.substr(0, std::char_traits<char>::length(op)) == op) {
      spec.op = op;
      break;
    }
  if (spec.op.empty()) return std::nullopt;
  std::string_view rest = s.substr(spec.op.size());
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
  spec.text = std::string(rest);
  if (spec.op == "===") {
    // Anything but whitespace, ';' and ')'.
    if (spec.text.find_first_of(" \t\n\r\f\v;)") != std::string::npos) return std::nullopt;
    return spec;
  }
  std::string_view version = rest;
  if ((spec.op == "==" || spec.op == "!=") && version.size() >= 2 && version.substr(version.size() - 2) == ".*") {
    spec.wildcard = true;
    version.remove_suffix(2);
  }
  auto v = parse_version(version);
  if (!v || (!version.empty() && std::isspace(static_cast<unsigned char>(version.back())))) return std::nullopt;
  // Where packaging's regex refuses a part: a wildcard only after a release,
  // local labels only on == and !=, ~= with two release numbers or more.
  if (spec.wildcard && (v->pre_kind >= 0 || v->post || v->dev || !v->local.empty())) return std::nullopt;
  if (!v->local.empty() && spec.op != "==" && spec.op != "!=") return std::nullopt;
  if (spec.op == "~=" && v->release.size() < 2) return std::nullopt;
  spec.version = std::move(*v);
  return spec;
}

namespace {

// Epoch equal and the release numbers (zero-padded) starting with `prefix`'s.
bool prefix_match(const Version& v, const Version& prefix) {
  if (compare_numbers(v.epoch, prefix.epoch)) return false;
  for (std::size_t k = 0; k < prefix.release.size(); ++k) {
    std::string x = k < v.release.size() ? v.release[k] : "0";
    if (x != prefix.release[k]) return false;
  }
  return true;
}

Version base(const Version& v) {
  Version out;
  out.epoch = v.epoch;
  out.release = v.release;
  return out;
}

}  // namespace

bool specifier_contains(const Specifier& spec, std::string_view version_text) {
  if (spec.op == "===") {
    // packaging's _compare_arbitrary: the candidate as packaging writes it when it is a version ("v1.0" is
    // "1.0"), else as given; then both lowercased.
    auto as_version = parse_version(version_text);
    std::string a = as_version ? as_version->str() : std::string(version_text), b = spec.text;
    auto trim = [](std::string& s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t") + 1);
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    };
    trim(a), trim(b);
    return a == b;
  }
  auto parsed = parse_version(version_text);
  if (!parsed) return false;
  const Version& v = *parsed;
  const Version& s = spec.version;
  if (spec.op == "==" || spec.op == "!=") {
    bool eq = spec.wildcard ? prefix_match(v, s) : compare(s.local.empty() ? v.public_version() : v, s) == 0;
    return spec.op == "==" ? eq : !eq;
  }
  if (spec.op == "~=") {
    Version prefix = base(s);
    prefix.release.pop_back();
    return compare(v.public_version(), s) >= 0 && prefix_match(v, prefix);
  }
  if (spec.op == "<=") return compare(v.public_version(), s) <= 0;
  if (spec.op == ">=") return compare(v.public_version(), s) >= 0;
  if (spec.op == "<") {
    if (compare(v, s) >= 0) return false;
    return s.is_prerelease() || !v.is_prerelease() || compare(base(v), base(s)) != 0;
  }
  // ">"
  if (compare(v, s) <= 0) return false;
  if (!s.is_postrelease() && v.is_postrelease() && compare(base(v), base(s)) == 0) return false;
  if (!v.local.empty() && compare(base(v), base(s)) == 0) return false;
  return true;
}

std::vector<Specifier> parse_specifier_set(std::string_view text) {
  std::vector<Specifier> out;
  std::size_t start = 0;
  for (;;) {
    auto comma = text.find(',', start);
    std::string_view clause = text.substr(start,
                                          comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (clause.find_first_not_of(" \t\n\r\f\v") != std::string_view::npos) {
      auto spec = parse_specifier(clause);
      if (!spec) {
        std::string shown(clause.substr(0, 200));
        throw Error(SyntaxRefusal::invalid_specifier, "'" + shown + "' is not a version specifier");
      }
      out.push_back(std::move(*spec));
    }
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool specifier_set_contains(const std::vector<Specifier>& set, std::string_view version) {
  return std::all_of(set.begin(), set.end(), [&](const Specifier& s) { return specifier_contains(s, version); });
}

}  // namespace provkit::pyspec
