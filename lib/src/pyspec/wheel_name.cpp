#include "provkit/pyspec/wheel_name.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "provkit/util/strings.hpp"

namespace provkit::pyspec {

namespace {
using util::lower;
using util::split;

// A parsed version: epoch, release numbers, pre (kind rank, number), post, dev.
struct Version {
  long epoch = 0;
  std::vector<long> release;
  int pre_kind = 3;  // 0 a, 1 b, 2 rc, 3 none (final)
  long pre_num = 0;
  long post = -1;
  long dev = -1;  // -1 none
  std::string local;
};

Version parse_version(std::string_view text) {
  std::string s = lower(text);
  if (!s.empty() && s[0] == 'v') s.erase(0, 1);
  Version v;
  std::size_t i = 0;
  auto read_num = [&](long& out) {
    std::size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i) return false;
    out = std::stol(s.substr(i, std::min<std::size_t>(j - i, 15)));
    i = j;
    return true;
  };
  auto skip_sep = [&] {
    if (i < s.size() && (s[i] == '.' || s[i] == '-' || s[i] == '_')) ++i;
  };
  long n = 0;
  if (read_num(n)) {
    if (i < s.size() && s[i] == '!') {
      v.epoch = n;
      ++i;
      read_num(n);
    }
    v.release.push_back(n);
    while (i + 1 < s.size() && s[i] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
      read_num(n);
      v.release.push_back(n);
    }
  }
  while (i < s.size()) {
    std::size_t save = i;
    skip_sep();
    auto starts = [&](std::string_view w) { return s.compare(i, w.size(), w) == 0; };
    int kind = -1;
    std::size_t len = 0;
    if (starts("alpha")) kind = 0, len = 5;
    else if (starts("beta")) kind = 1, len = 4;
    else if (starts("preview")) kind = 2, len = 7;
    else if (starts("pre")) kind = 2, len = 3;
    else if (starts("rc")) kind = 2, len = 2;
    else if (starts("c")) kind = 2, len = 1;
    else if (starts("a")) kind = 0, len = 1;
    else if (starts("b")) kind = 1, len = 1;
    if (kind >= 0) {
      i += len;
      skip_sep();
      v.pre_kind = kind;
      long num = 0;
      read_num(num);
      v.pre_num = num;
      continue;
    }
    if (starts("post") || starts("rev") || starts("r")) {
      i += starts("post") ? 4 : starts("rev") ? 3 : 1;
      skip_sep();
      long num = 0;
      read_num(num);
      v.post = num;
      continue;
    }
    if (starts("dev")) {
      i += 3;
      skip_sep();
      long num = 0;
      read_num(num);
      v.dev = num;
      continue;
    }
    if (i < s.size() && s[i] == '+') {
      v.local = s.substr(i + 1);
      break;
    }
    // "1.0-1" is an implicit post release.
    if (save < s.size() && s[save] == '-') {
      i = save + 1;
      long num = 0;
      if (read_num(num)) {
        v.post = num;
        continue;
      }
    }
    v.local = s.substr(save);  // unparseable tail: compare it textually
    break;
  }
  while (v.release.size() > 1 && v.release.back() == 0) v.release.pop_back();
  return v;
}
}  // namespace

std::string normalize_name(std::string_view name) {
  std::string out;
  bool in_sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      in_sep = true;
      continue;
    }
    if (in_sep && !out.empty()) out += '-';
    in_sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string dist_info_name(std::string_view name) {
  std::string out = normalize_name(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::vector<std::string> WheelName::tags() const {
  std::vector<std::string> out;
  for (auto& p : python_tags)
    for (auto& a : abi_tags)
      for (auto& pl : platform_tags) out.push_back(util::concat({p, "-", a, "-", pl}));
  return out;
}

std::optional<WheelName> parse_wheel_name(std::string_view filename) {
  if (filename.size() < 5 || filename.substr(filename.size() - 4) != ".whl") return std::nullopt;
  auto parts = split(filename.substr(0, filename.size() - 4), '-');
  if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
  for (auto& p : parts)
    if (p.empty()) return std::nullopt;
  WheelName w;
  w.filename = std::string(filename);
  w.name = parts[0];
  w.version = parts[1];
  std::size_t t = 2;
  if (parts.size() == 6) {
    w.build = parts[2];
    if (!std::isdigit(static_cast<unsigned char>(w.build[0]))) return std::nullopt;
    t = 3;
  }
  w.python_tags = split(parts[t], '.');
  w.abi_tags = split(parts[t + 1], '.');
  w.platform_tags = split(parts[t + 2], '.');
  return w;
}

int compare_versions(std::string_view a, std::string_view b) {
  Version x = parse_version(a), y = parse_version(b);
  if (x.epoch != y.epoch) return x.epoch < y.epoch ? -1 : 1;
  std::size_t n = std::max(x.release.size(), y.release.size());
  for (std::size_t i = 0; i < n; ++i) {
    long p = i < x.release.size() ? x.release[i] : 0;
    long q = i < y.release.size() ? y.release[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  // A dev release without pre/post sorts before the pre releases.
  auto pre_key = [](const Version& v) {
    if (v.pre_kind == 3 && v.post < 0 && v.dev >= 0) return std::make_tuple(-1, 0L);
    return std::make_tuple(v.pre_kind, v.pre_num);
  };
  if (pre_key(x) != pre_key(y)) return pre_key(x) < pre_key(y) ? -1 : 1;
  if (x.post != y.post) return x.post < y.post ? -1 : 1;
  long dx = x.dev < 0 ? (1L << 40) : x.dev, dy = y.dev < 0 ? (1L << 40) : y.dev;
  if (dx != dy) return dx < dy ? -1 : 1;
  if (x.local != y.local) return x.local < y.local ? -1 : 1;
  return 0;
}

bool same_version(std::string_view a, std::string_view b) { return compare_versions(a, b) == 0; }

}  // namespace provkit::pyspec
