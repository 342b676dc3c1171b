#include "provkit/pyspec/lock.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "markers.hpp"
#include "provkit/error.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::pyspec {

namespace {

using util::trim;

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// "sha256:<hex>" -> hex; refuses weak or unknown algorithms.
std::string parse_hash(const std::string& value, const std::string& file, int line) {
  auto colon = value.find(':');
  if (colon == std::string::npos)
    throw input_error(LockRefusal::weak_hash, file, line, "--hash needs ALGORITHM:HEX, got '" + value + "'");
  std::string algo = value.substr(0, colon), hex = util::lower(value.substr(colon + 1));
  if (algo == "md5" || algo == "sha1" || algo == "sha224")
    throw input_error(LockRefusal::weak_hash, file, line, algo + " hashes are too weak; use sha256");
  if (algo != "sha256")
    throw input_error(LockRefusal::weak_hash, file, line,
                      "unsupported hash algorithm '" + algo + "' (envbuild checks sha256)");
  if (!util::is_hex(hex, 64))
    throw input_error(LockRefusal::weak_hash, file, line, "sha256 hash must be 64 hex digits, got '" + hex + "'");
  return hex;
}

// pip expands ${NAME} (upper-case letters, digits, '_') from the environment in
// requirement files; a variable unset or empty stays as written.
std::string expand_env_vars(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    auto open = s.find("${", i);
    if (open == std::string::npos) break;
    auto close = s.find('}', open + 2);
    if (close == std::string::npos) break;
    std::string name = s.substr(open + 2, close - open - 2);
    bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
      return std::isupper(c) || std::isdigit(c) || c == '_';
    });
    std::string value = valid ? util::env_named_in_input(name).value_or("") : "";
    out += s.substr(i, open - i) + (value.empty() ? s.substr(open, close + 1 - open) : value);
    i = close + 1;
  }
  return out + s.substr(std::min(i, s.size()));
}

// "name[extras] == version" (or ===): the name, then the pinned version; false
// for anything else. One pass, no regex: a requirement can be any length.
bool split_pin(const std::string& req, std::string& name, std::string& version) {
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  };
  auto version_char = [&](char c) { return name_char(c) || c == '!' || c == '+'; };
  auto space = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t i = 0, n = req.size();
  if (i >= n || !std::isalnum(static_cast<unsigned char>(req[i]))) return false;
  while (i < n && name_char(req[i])) ++i;
  name = req.substr(0, i);
  while (i < n && space(req[i])) ++i;
  if (i < n && req[i] == '[') {
    auto close = req.find(']', i);
    if (close == std::string::npos) return false;
    i = close + 1;
    while (i < n && space(req[i])) ++i;
  }
  if (req.compare(i, 3, "===") == 0) i += 3;
  else if (req.compare(i, 2, "==") == 0) i += 2;
  else return false;
  while (i < n && space(req[i])) ++i;
  std::size_t start = i;
  while (i < n && version_char(req[i])) ++i;
  version = req.substr(start, i - start);
  return !version.empty() && i == n;
}

}  // namespace

Lock parse_requirements(const std::string& text, const fs::path& path) {
  const std::string file = path.string();
  Lock lock;
  lock.file = path;
  std::istringstream in(text);
  std::string raw;
  int lineno = 0;
  bool any_hash = false;
  std::vector<std::pair<int, std::string>> unhashed;   // requirement lines without a hash
  std::vector<std::pair<int, std::string>> no_binary;  // --no-binary values, in order
  std::unordered_map<std::string, int> seen;           // name + marker -> line
  while (std::getline(in, raw)) {
    ++lineno;
    int start_line = lineno;
    // Join continuation lines; a comment ends the logical line's content.
    std::string logical;
    for (;;) {
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      // Comments: '#' at the start or after whitespace (so URL fragments survive).
      for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '#' && (i == 0 || raw[i - 1] == ' ' || raw[i - 1] == '\t')) {
          raw.erase(i);
          break;
        }
      }
      bool cont = !raw.empty() && raw.back() == '\\';
      if (cont) raw.pop_back();
      logical += raw + " ";
      if (!cont) break;
      if (!std::getline(in, raw)) break;
      ++lineno;
    }
    logical = trim(logical);
    if (logical.empty()) continue;
    // Messages quote the tokens as written: an expanded variable may hold a secret.
    auto tokens = split_ws(logical);
    if (tokens.empty()) continue;  // only whitespace trim() keeps (\v, \f): a blank line
    auto expanded = [&](std::size_t i) { return expand_env_vars(tokens[i]); };
    if (tokens[0][0] == '-') {
      // Option lines pip accepts in requirement files; several may share a line.
      for (std::size_t t = 0; t < tokens.size(); ++t) {
        std::string opt = tokens[t], value;
        bool has_value = false;
        if (opt[0] != '-')
          throw input_error(LockRefusal::malformed, file, start_line,
                            "'" + opt + "' follows options; a requirement goes on its own line");
        if (auto eq = opt.find('='); eq != std::string::npos && opt.rfind("--", 0) == 0) {
          value = expand_env_vars(opt.substr(eq + 1));
          opt = opt.substr(0, eq);
          has_value = true;
        }
        auto take = [&](const char* what) {
          if (!has_value) {
            if (t + 1 >= tokens.size())
              throw input_error(LockRefusal::malformed, file, start_line, opt + " needs " + what);
            value = expanded(++t);
          }
          if (value.empty()) throw input_error(LockRefusal::malformed, file, start_line, opt + " needs " + what);
          return value;
        };
        if (opt == "-i" || opt == "--index-url" || opt == "--extra-index-url") {
          lock.index_urls.push_back(take("a URL"));
        } else if (opt == "-f" || opt == "--find-links") {
          std::string dir = take("a directory");
          fs::path p = dir;
          if (p.is_relative() && dir.find("://") == std::string::npos) p = path.parent_path() / p;
          lock.find_links.push_back(p.string());
        } else if (opt == "--no-binary") {
          no_binary.emplace_back(start_line, take("package names, :all: or :none:"));
        } else if (opt == "--only-binary" || opt == "--trusted-host") {
          take(opt == "--trusted-host" ? "a host" : "package names, :all: or :none:");  // wheels only already
        } else if (opt == "--no-index" || opt == "--prefer-binary" || opt == "--pre" || opt == "--require-hashes") {
          // Already how envbuild works (wheels only, hashes required, exact pins
          // that may name pre-releases) or irrelevant to it.
        } else if (opt == "-e" || opt == "--editable") {
          throw input_error(LockRefusal::not_pinned, file, start_line,
                            "editable requirements ('" + opt + (t + 1 < tokens.size() ? " " + tokens[t + 1] : "") +
                                "') cannot be locked by hash; envbuild installs wheels only (uv export: "
                                "--no-emit-project; or build the project into a wheel and lock that)");
        } else if (opt == "-r" || opt == "-c" || opt == "--requirement" || opt == "--constraint") {
          throw input_error(LockRefusal::unsupported, file, start_line,
                            "included files (" + opt + ") are not supported; give one complete lock");
        } else {
          throw input_error(LockRefusal::malformed, file, start_line, "unknown option '" + opt + "'");
        }
      }
      continue;
    }
    // Requirement: everything before the first token that starts with '-'.
    std::string req, req_written;
    std::size_t t = 0;
    for (; t < tokens.size() && tokens[t][0] != '-'; ++t) {
      req += (req.empty() ? "" : " ") + expanded(t);
      req_written += (req_written.empty() ? "" : " ") + tokens[t];
    }
    LockEntry entry;
    entry.line = start_line;
    auto semi = req.find(';');
    if (semi != std::string::npos) {
      entry.marker = trim(req.substr(semi + 1));
      req = trim(req.substr(0, semi));
      if (entry.marker.empty())
        throw input_error(LockRefusal::invalid_marker, file, start_line, "empty environment marker after ';'");
    }
    if (auto w = req_written.find(';'); w != std::string::npos) req_written = trim(req_written.substr(0, w));
    if (req.find("://") != std::string::npos || req.find(" @ ") != std::string::npos)
      throw input_error(LockRefusal::not_pinned, file, start_line,
                        "URL requirements are not supported; pin name==version with --hash");
    std::string name, version;
    if (!split_pin(req, name, version)) {
      if (req.find_first_of("<>~!*,") != std::string::npos || req.find("==") == std::string::npos)
        throw input_error(LockRefusal::not_pinned, file, start_line,
                          "'" + req_written + "' is not pinned; every entry must be name==version");
      throw input_error(LockRefusal::malformed, file, start_line, "cannot parse requirement '" + req_written + "'");
    }
    entry.name = name;
    entry.version = version;
    if (!entry.marker.empty()) {
      try {
        Marker::parse(entry.marker);
      } catch (const Error& e) {
        throw input_error(LockRefusal::invalid_marker, file, start_line, std::string("invalid marker: ") + e.what());
      }
    }
    if (entry.version.find('*') != std::string::npos)
      throw input_error(LockRefusal::not_pinned, file, start_line,
                        "'" + req_written + "' is not pinned to one version");
    for (; t < tokens.size(); ++t) {
      std::string tok = expanded(t), value;
      if (tok.rfind("--hash=", 0) == 0) {
        value = tok.substr(7);
      } else if (tok == "--hash" && t + 1 < tokens.size()) {
        value = expanded(++t);
      } else {
        throw input_error(LockRefusal::malformed, file, start_line,
                          "unknown option '" + tokens[t] + "' on a requirement");
      }
      entry.sha256.push_back(parse_hash(value, file, start_line));
    }
    if (entry.sha256.empty()) unhashed.emplace_back(start_line, entry.name);
    else any_hash = true;
    auto [prev, fresh] = seen.emplace(normalize_name(entry.name) + '\0' + entry.marker, start_line);
    if (!fresh)
      throw input_error(LockRefusal::duplicate, file, start_line,
                        entry.name + " is already locked at line " + std::to_string(prev->second));
    lock.entries.push_back(std::move(entry));
  }
  if (!unhashed.empty())
    throw input_error(LockRefusal::unhashed, file, unhashed.front().first,
                      unhashed.front().second + " has no --hash=sha256:...; every entry must be hashed" +
                          (any_hash ? "" : " (this is not a hash-checking lock)"));
  // --no-binary asks pip to build from source, which envbuild never does: refused
  // where it names a locked package (pip's rules: :all:, :none: resets, names add).
  bool all = false;
  int all_line = 0;
  std::map<std::string, int> named;
  for (auto& [line, value] : no_binary) {
    std::istringstream names(value);
    for (std::string name; std::getline(names, name, ',');) {
      if (name == ":none:") all = false, named.clear();
      else if (name == ":all:") all = true, all_line = line;
      else if (!name.empty()) named[normalize_name(name)] = line;
    }
  }
  for (auto& e : lock.entries) {
    auto found = named.find(normalize_name(e.name));
    if (!all && found == named.end()) continue;
    throw input_error(LockRefusal::unsupported, file, found != named.end() ? found->second : all_line,
                      "--no-binary covers " + e.name + " (line " + std::to_string(e.line) +
                          "): pip would build it from source, and envbuild installs wheels only");
  }
  return lock;
}

ExitCode exit_code(LockRefusal r) {
  return r == LockRefusal::python_mismatch || r == LockRefusal::environment_mismatch ? ExitCode::check_failed
                                                                                     : ExitCode::usage;
}

// The shared name of the exit code: what --json said before the reasons were typed.
std::string_view reason_name(LockRefusal r) { return reason_name(reason_for(exit_code(r))); }

bool is_pylock_name(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name == "pylock.toml") return true;
  if (name.size() <= 12 || name.rfind("pylock.", 0) != 0 || name.compare(name.size() - 5, 5, ".toml") != 0)
    return false;
  return name.substr(7, name.size() - 12).find('.') == std::string::npos;
}

Lock read_lock(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw Error(LockRefusal::not_found, file.string() + ": lock file not found");
  std::string text;
  try {
    text = util::read_file(file);
  } catch (const Error& e) {
    throw Error(LockRefusal::malformed, e.what());  // a lock too large to read is invalid input, as a malformed one is
  }
  auto name = file.filename().string();
  if (is_pylock_name(file)) return parse_pylock(text, file);
  std::istringstream in(text);
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    auto key = line.find_first_not_of(" \t");
    auto after = key == std::string::npos ? key : line.find_first_not_of(" \t", key + 12);
    if (key != std::string::npos && line.compare(key, 12, "lock-version") == 0 && after != std::string::npos &&
        line[after] == '=')
      throw input_error(
          LockRefusal::malformed, file.string(), lineno,
          "this is a PEP 751 lock (" + trim(line) + "), but it is named '" + name +
              "'; PEP 751 locks must be named pylock.toml or pylock.NAME.toml (NAME without dots): rename it");
  }
  return parse_requirements(text, file);
}

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string at(const std::string& file, int line) { return file + (line > 0 ? ":" + std::to_string(line) : "") + ": "; }

}  // namespace

std::vector<LockEntry> applicable_entries(const Lock& lock, const std::map<std::string, std::string>& env,
                                          const LockSelection& selection) {
  const std::string file = lock.file.string();
  auto value = [&](const char* key) {
    auto it = env.find(key);
    return it == env.end() ? std::string() : it->second;
  };
  const std::string python = value("python_full_version");

  // 1. Extras and groups (PEP 751: extras none by default, groups default-groups).
  MarkerSets sets;
  if (!lock.pylock && (!selection.extras.empty() || !selection.groups.empty()))
    throw Error(LockRefusal::no_such_selection,
                file + ": a requirements file has no extras or dependency groups to choose among (a pylock.toml has)");
  auto offered = [](const std::vector<std::string>& names) {
    std::set<std::string> out;
    for (auto& n : names) out.insert(normalize_name(n));
    return out;
  };
  const auto extras = offered(lock.extras);
  auto groups = offered(lock.dependency_groups);
  for (auto& g : lock.default_groups) groups.insert(normalize_name(g));
  for (auto& x : selection.extras) {
    if (!extras.count(normalize_name(x)))
      throw Error(LockRefusal::no_such_selection,
                  util::concat({file, ": the lock has no extra '", x, "' (",
                                lock.extras.empty() ? "it offers none" : "it offers: " + joined(lock.extras, ", "),
                                ")"}));
    sets.extras.insert(normalize_name(x));
  }
  std::vector<std::string> group_names = lock.dependency_groups;
  for (auto& g : lock.default_groups)
    if (std::find(group_names.begin(), group_names.end(), g) == group_names.end()) group_names.push_back(g);
  for (auto& g : selection.groups) {
    if (!groups.count(normalize_name(g)))
      throw Error(LockRefusal::no_such_selection,
                  util::concat({file, ": the lock has no dependency group '", g, "' (",
                                group_names.empty() ? "it offers none" : "it offers: " + joined(group_names, ", "),
                                ")"}));
    sets.dependency_groups.insert(normalize_name(g));
  }
  if (!selection.no_default_groups)
    for (auto& g : lock.default_groups) sets.dependency_groups.insert(normalize_name(g));

  auto marker_true = [&](const std::string& marker, int line) {
    try {
      return evaluate_marker(marker, env, lock.pylock ? &sets : nullptr);
    } catch (const Error& err) {
      throw input_error(LockRefusal::invalid_marker, file, line, err.what());
    }
  };
  auto environment_true = [&](const std::string& marker, int line) {
    try {
      return Marker::parse(marker).evaluate(env, MarkerContext::requirement);
    } catch (const Error& err) {
      throw input_error(LockRefusal::invalid_marker, file, line, err.what());
    }
  };
  auto python_fits = [&](const std::string& spec, int line) {
    try {
      return version_matches(python, spec);
    } catch (const Error& err) {
      throw input_error(LockRefusal::invalid_specifier, file, line, std::string("requires-python: ") + err.what());
    }
  };

  // 2. The lock as a whole must admit the interpreter (`environments = []` admits none).
  if (!lock.requires_python.empty() && !python_fits(lock.requires_python, lock.requires_python_line))
    throw Error(LockRefusal::python_mismatch, at(file, lock.requires_python_line) + "the lock requires Python " +
                                                  lock.requires_python + "; the interpreter is Python " + python);
  if (!lock.environments.empty() || lock.has_environments) {
    bool any = false;
    for (auto& m : lock.environments) any = environment_true(m, lock.environments_line) || any;
    if (!any)
      throw Error(LockRefusal::environment_mismatch,
                  at(file, lock.environments_line) + "the lock is for the environments " +
                      joined(lock.environments, " | ") + ", and this interpreter is in none of them (sys_platform '" +
                      value("sys_platform") + "', platform_machine '" + value("platform_machine") +
                      "', python_full_version '" + python + "', implementation_name '" + value("implementation_name") +
                      "')");
  }

  // 3. Entries: marker, then the entry's own requires-python, one per name.
  std::vector<LockEntry> out;
  std::map<std::string, int> selected;  // normalised name -> line
  for (auto& e : lock.entries) {
    if (!e.marker.empty() && !marker_true(e.marker, e.line)) continue;
    if (!e.requires_python.empty() && !python_fits(e.requires_python, e.line))
      throw Error(LockRefusal::python_mismatch, at(file, e.line) + e.name + "==" + e.version + " requires Python " +
                                                    e.requires_python + "; the interpreter is Python " + python);
    if (!e.unusable.empty()) throw input_error(e.unusable_reason, file, e.unusable_line, e.unusable);
    auto [it, fresh] = selected.emplace(normalize_name(e.name), e.line);
    if (!fresh)
      throw input_error(LockRefusal::duplicate, file, e.line,
                        e.name + " is locked twice for this environment (lines " + std::to_string(it->second) +
                            " and " + std::to_string(e.line) + "); at most one entry per name may apply");
    out.push_back(e);
  }
  return out;
}

namespace {
std::vector<LockEntry> sorted(std::vector<LockEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const LockEntry& a, const LockEntry& b) { return normalize_name(a.name) < normalize_name(b.name); });
  return entries;
}
}  // namespace

std::string format_requirements(const std::vector<LockEntry>& entries, const std::string& header) {
  std::string out;
  if (!header.empty()) out += "# " + header + "\n";
  for (auto& e : sorted(entries)) {
    out += e.name + "==" + e.version;
    if (!e.marker.empty()) out += " ; " + e.marker;
    for (auto& h : e.sha256) out += " \\\n    --hash=sha256:" + h;
    out += "\n";
  }
  return out;
}

std::string format_pylock(const std::vector<LockEntry>& entries, const std::string& created_by) {
  toml::table doc;
  doc.insert("lock-version", "1.0");
  doc.insert("created-by", created_by);
  toml::array packages;
  for (auto& e : sorted(entries)) {
    toml::table pkg;
    pkg.insert("name", normalize_name(e.name));
    pkg.insert("version", e.version);
    if (!e.marker.empty()) pkg.insert("marker", e.marker);
    toml::array wheels;
    for (auto& w : e.wheels) {
      toml::table wt;
      wt.insert("name", w.filename);
      if (!w.url.empty()) wt.insert("url", w.url);
      if (!w.path.empty()) wt.insert("path", w.path);
      if (w.size) wt.insert("size", static_cast<std::int64_t>(*w.size));
      toml::table hashes;
      hashes.insert("sha256", w.sha256);
      wt.insert("hashes", std::move(hashes));
      wheels.push_back(std::move(wt));
    }
    pkg.insert("wheels", std::move(wheels));
    packages.push_back(std::move(pkg));
  }
  doc.insert("packages", std::move(packages));
  std::ostringstream out;
  out << doc << "\n";
  return out.str();
}

}  // namespace provkit::pyspec
