#include "provkit/python/lock.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/http/http.hpp"
#include "provkit/python/markers.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/python/wheel_name.hpp"

namespace provkit::python {

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
  if (colon == std::string::npos) throw input_error(file, line, "--hash needs ALGORITHM:HEX, got '" + value + "'");
  std::string algo = value.substr(0, colon), hex = util::lower(value.substr(colon + 1));
  if (algo == "md5" || algo == "sha1" || algo == "sha224")
    throw input_error(file, line, algo + " hashes are too weak; use sha256");
  if (algo != "sha256") throw input_error(file, line, "unsupported hash algorithm '" + algo + "' (envbuild checks sha256)");
  if (!util::is_hex(hex, 64)) throw input_error(file, line, "sha256 hash must be 64 hex digits, got '" + hex + "'");
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
    std::string value = valid ? util::getenv_str(name.c_str()) : "";
    out += s.substr(i, open - i) + (value.empty() ? s.substr(open, close + 1 - open) : value);
    i = close + 1;
  }
  return out + s.substr(std::min(i, s.size()));
}

}  // namespace

Lock parse_requirements(const std::string& text, const fs::path& path) {
  static const std::regex req_re(R"(^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(===|==)\s*([A-Za-z0-9!+._-]+)$)");
  const std::string file = path.string();
  Lock lock;
  lock.file = path;
  std::istringstream in(text);
  std::string raw;
  int lineno = 0;
  bool any_hash = false;
  std::vector<std::pair<int, std::string>> unhashed;  // requirement lines without a hash
  std::vector<std::pair<int, std::string>> no_binary;  // --no-binary values, in order
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
    auto expanded = [&](std::size_t i) { return expand_env_vars(tokens[i]); };
    if (tokens[0][0] == '-') {
      // Option lines pip accepts in requirement files; several may share a line.
      for (std::size_t t = 0; t < tokens.size(); ++t) {
        std::string opt = tokens[t], value;
        bool has_value = false;
        if (opt[0] != '-') throw input_error(file, start_line, "'" + opt + "' follows options; a requirement goes on its own line");
        if (auto eq = opt.find('='); eq != std::string::npos && opt.rfind("--", 0) == 0) {
          value = expand_env_vars(opt.substr(eq + 1));
          opt = opt.substr(0, eq);
          has_value = true;
        }
        auto take = [&](const char* what) {
          if (!has_value) {
            if (t + 1 >= tokens.size()) throw input_error(file, start_line, opt + " needs " + what);
            value = expanded(++t);
          }
          if (value.empty()) throw input_error(file, start_line, opt + " needs " + what);
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
          throw input_error(file, start_line, "editable requirements ('" + opt + (t + 1 < tokens.size() ? " " + tokens[t + 1] : "") +
                                                  "') cannot be locked by hash; envbuild installs wheels only (uv export: "
                                                  "--no-emit-project; or build the project into a wheel and lock that)");
        } else if (opt == "-r" || opt == "-c" || opt == "--requirement" || opt == "--constraint") {
          throw input_error(file, start_line, "included files (" + opt + ") are not supported; give one complete lock");
        } else {
          throw input_error(file, start_line, "unknown option '" + opt + "'");
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
      if (entry.marker.empty()) throw input_error(file, start_line, "empty environment marker after ';'");
    }
    if (auto w = req_written.find(';'); w != std::string::npos) req_written = trim(req_written.substr(0, w));
    if (req.find("://") != std::string::npos || req.find(" @ ") != std::string::npos)
      throw input_error(file, start_line, "URL requirements are not supported; pin name==version with --hash");
    std::smatch m;
    if (!std::regex_match(req, m, req_re)) {
      if (req.find_first_of("<>~!*,") != std::string::npos || req.find("==") == std::string::npos)
        throw input_error(file, start_line, "'" + req_written + "' is not pinned; every entry must be name==version");
      throw input_error(file, start_line, "cannot parse requirement '" + req_written + "'");
    }
    entry.name = m[1].str();
    entry.version = m[4].str();
    if (entry.version.find('*') != std::string::npos)
      throw input_error(file, start_line, "'" + req_written + "' is not pinned to one version");
    for (; t < tokens.size(); ++t) {
      std::string tok = expanded(t), value;
      if (tok.rfind("--hash=", 0) == 0) {
        value = tok.substr(7);
      } else if (tok == "--hash" && t + 1 < tokens.size()) {
        value = expanded(++t);
      } else {
        throw input_error(file, start_line, "unknown option '" + tokens[t] + "' on a requirement");
      }
      entry.sha256.push_back(parse_hash(value, file, start_line));
    }
    if (entry.sha256.empty()) unhashed.emplace_back(start_line, entry.name);
    else any_hash = true;
    for (auto& prev : lock.entries)
      if (normalize_name(prev.name) == normalize_name(entry.name) && prev.marker == entry.marker)
        throw input_error(file, start_line, entry.name + " is already locked at line " + std::to_string(prev.line));
    lock.entries.push_back(std::move(entry));
  }
  if (!unhashed.empty())
    throw input_error(file, unhashed.front().first,
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
    throw input_error(file, found != named.end() ? found->second : all_line,
                      "--no-binary covers " + e.name + " (line " + std::to_string(e.line) +
                          "): pip would build it from source, and envbuild installs wheels only");
  }
  return lock;
}

namespace {

// A specifier set checked for syntax where it is read.
void check_specifier(const std::string& spec, const std::string& file, int line) {
  try {
    version_matches("0", spec);
  } catch (const std::invalid_argument& e) {
    throw input_error(file, line, std::string("requires-python: ") + e.what());
  }
}

}  // namespace

Lock parse_pylock(const std::string& text, const fs::path& path) {
  const std::string file = path.string();
  Lock lock;
  lock.file = path;
  lock.pylock = true;
  toml::table doc;
  try {
    doc = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw input_error(file, static_cast<int>(e.source().begin.line), std::string(e.description()));
  }
  auto line_of = [](const toml::node* n) { return n ? static_cast<int>(n->source().begin.line) : 0; };
  auto version = doc["lock-version"].value<std::string>();
  if (!version) throw input_error(file, 1, "missing lock-version");
  if (version->rfind("1.", 0) != 0 && *version != "1")
    throw input_error(file, line_of(doc.get("lock-version")), "unsupported lock-version " + *version + " (envbuild reads 1.x)");
  auto string_of = [&](const toml::table& t, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return std::string();
    auto v = n->value<std::string>();
    if (!v) throw input_error(file, line_of(n), std::string(key) + " must be a string");
    return *v;
  };
  auto strings_of = [&](const char* key, std::vector<std::string>& out) {
    const toml::node* n = doc.get(key);
    if (!n) return 0;
    auto* arr = n->as_array();
    if (!arr) throw input_error(file, line_of(n), std::string(key) + " must be an array of strings");
    for (auto& item : *arr) {
      auto v = item.value<std::string>();
      if (!v) throw input_error(file, line_of(&item), std::string(key) + " must be an array of strings");
      out.push_back(*v);
    }
    return line_of(n);
  };
  lock.requires_python = string_of(doc, "requires-python");
  lock.requires_python_line = line_of(doc.get("requires-python"));
  if (!lock.requires_python.empty()) check_specifier(lock.requires_python, file, lock.requires_python_line);
  lock.environments_line = strings_of("environments", lock.environments);
  strings_of("extras", lock.extras);
  strings_of("dependency-groups", lock.dependency_groups);
  strings_of("default-groups", lock.default_groups);
  auto* packages = doc["packages"].as_array();
  if (!packages) return lock;
  for (auto& node : *packages) {
    auto* pkg = node.as_table();
    int line = line_of(&node);
    if (!pkg) throw input_error(file, line, "[[packages]] entry is not a table");
    LockEntry entry;
    entry.line = line;
    auto name = (*pkg)["name"].value<std::string>();
    if (!name) throw input_error(file, line, "package without a name");
    entry.name = *name;
    entry.marker = string_of(*pkg, "marker");
    entry.requires_python = string_of(*pkg, "requires-python");
    if (!entry.requires_python.empty()) check_specifier(entry.requires_python, file, line_of(pkg->get("requires-python")));
    auto* wheels = (*pkg)["wheels"].as_array();
    const bool has_source = (wheels && !wheels->empty()) || pkg->contains("sdist") || pkg->contains("vcs") ||
                            pkg->contains("archive") || pkg->contains("directory");
    if (!has_source) {  // not a PEP 751 entry at all
      if (!pkg->contains("version")) throw input_error(file, line, entry.name + " has no version; every entry must be pinned");
      throw input_error(file, line, entry.name + " has no source (wheels, sdist, archive, directory or vcs)");
    }
    if (!wheels || wheels->empty()) {
      // Refused only if selected: other platforms' entries may be sources only.
      entry.unusable_line = line;
      if (auto* dir = (*pkg)["directory"].as_table()) {
        entry.unusable = entry.name + " is the local directory '" + string_of(*dir, "path") +
                         "', not a wheel; envbuild installs wheels only (uv: export with --no-emit-project, or "
                         "build the project into a wheel and lock that)";
      } else {
        std::string kind = pkg->contains("sdist") ? "only an sdist" : pkg->contains("vcs") ? "only a vcs source"
                                                                                      : "only an archive";
        entry.unusable = entry.name + " has " + kind + " and no wheels; envbuild installs wheels only";
      }
      entry.version = (*pkg)["version"].value_or(std::string());
      lock.entries.push_back(std::move(entry));
      continue;
    }
    auto ver = (*pkg)["version"].value<std::string>();
    if (!ver) throw input_error(file, line, entry.name + " has no version; every entry must be pinned");
    entry.version = *ver;
    for (auto& wnode : *wheels) {
      auto* w = wnode.as_table();
      int wline = line_of(&wnode);
      if (!w) throw input_error(file, wline, entry.name + ": wheel entry is not a table");
      LockedWheel lw;
      lw.url = (*w)["url"].value_or(std::string());
      lw.path = (*w)["path"].value_or(std::string());
      lw.filename = (*w)["name"].value_or(std::string());
      if (lw.filename.empty() && !lw.url.empty()) {
        // The URL's last part, decoded: uv writes "torch-2.6.0%2Bcpu-...whl" with no name.
        std::string from = lw.url.substr(0, lw.url.find_first_of("?#"));
        lw.filename = http::percent_decode(from.substr(from.find_last_of('/') + 1));
      } else if (lw.filename.empty()) {
        lw.filename = fs::path(lw.path).filename().string();
      }
      if (lw.filename.empty()) throw input_error(file, wline, entry.name + ": wheel has no name, url or path");
      if (!parse_wheel_name(lw.filename)) throw input_error(file, wline, "'" + lw.filename + "' is not a wheel file name");
      if (auto size = (*w)["size"].value<std::int64_t>()) lw.size = static_cast<std::uint64_t>(*size);
      auto* hashes = (*w)["hashes"].as_table();
      if (!hashes) throw input_error(file, wline, lw.filename + " has no hashes");
      auto sha = (*hashes)["sha256"].value<std::string>();
      if (!sha) {
        if (entry.unusable.empty()) {
          entry.unusable_line = wline;
          entry.unusable =
              hashes->empty()
                  ? "the lock has no hash for " + lw.filename +
                        " (hashes = {}: uv writes that for wheels from a local --find-links directory); envbuild "
                        "needs a sha256 for every wheel: lock from an index that serves hashes, or write a hashed "
                        "requirements lock with `uv pip compile --generate-hashes --find-links DIR`, which hashes local wheels"
                  : lw.filename + " has no sha256 hash (envbuild checks sha256)";
        }
        continue;
      }
      lw.sha256 = parse_hash("sha256:" + *sha, file, wline);
      entry.sha256.push_back(lw.sha256);
      entry.wheels.push_back(std::move(lw));
    }
    lock.entries.push_back(std::move(entry));
  }
  return lock;
}

bool is_pylock_name(const fs::path& file) {
  static const std::regex pylock_name(R"(^pylock(\.[^.]+)?\.toml$)");
  return std::regex_match(file.filename().string(), pylock_name);
}

Lock read_lock(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw Error(ExitCode::usage, file.string() + ": lock file not found");
  std::string text = util::read_file(file);
  auto name = file.filename().string();
  if (is_pylock_name(file)) return parse_pylock(text, file);
  static const std::regex pylock_line(R"(^\s*lock-version\s*=)");
  std::istringstream in(text);
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (std::regex_search(line, pylock_line))
      throw input_error(file.string(), lineno,
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
    throw Error(ExitCode::usage, file + ": --extra and --group choose among a pylock.toml's extras and dependency "
                                        "groups; a requirements file has none");
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
      throw Error(ExitCode::usage, file + ": the lock has no extra '" + x + "' (" +
                                       (lock.extras.empty() ? "it offers none" : "it offers: " + joined(lock.extras, ", ")) + ")");
    sets.extras.insert(normalize_name(x));
  }
  std::vector<std::string> group_names = lock.dependency_groups;
  for (auto& g : lock.default_groups)
    if (std::find(group_names.begin(), group_names.end(), g) == group_names.end()) group_names.push_back(g);
  for (auto& g : selection.groups) {
    if (!groups.count(normalize_name(g)))
      throw Error(ExitCode::usage, file + ": the lock has no dependency group '" + g + "' (" +
                                       (group_names.empty() ? "it offers none" : "it offers: " + joined(group_names, ", ")) + ")");
    sets.dependency_groups.insert(normalize_name(g));
  }
  if (!selection.no_default_groups)
    for (auto& g : lock.default_groups) sets.dependency_groups.insert(normalize_name(g));

  auto marker_true = [&](const std::string& marker, int line) {
    try {
      return evaluate_marker(marker, env, lock.pylock ? &sets : nullptr);
    } catch (const std::invalid_argument& err) {
      throw input_error(file, line, err.what());
    }
  };
  auto python_fits = [&](const std::string& spec, int line) {
    try {
      return version_matches(python, spec);
    } catch (const std::invalid_argument& err) {
      throw input_error(file, line, std::string("requires-python: ") + err.what());
    }
  };

  // 2. The lock as a whole must admit the interpreter.
  if (!lock.requires_python.empty() && !python_fits(lock.requires_python, lock.requires_python_line))
    throw Error(ExitCode::check_failed, at(file, lock.requires_python_line) + "the lock requires Python " +
                                            lock.requires_python + "; the interpreter is Python " + python);
  if (!lock.environments.empty()) {
    bool any = false;
    for (auto& m : lock.environments) any = marker_true(m, lock.environments_line) || any;
    if (!any)
      throw Error(ExitCode::check_failed,
                  at(file, lock.environments_line) + "the lock is for the environments " +
                      joined(lock.environments, " | ") + ", and this interpreter is in none of them (sys_platform '" +
                      value("sys_platform") + "', platform_machine '" + value("platform_machine") +
                      "', python_full_version '" + python + "', implementation_name '" + value("implementation_name") + "')");
  }

  // 3. Entries: marker, then the entry's own requires-python, one per name.
  std::vector<LockEntry> out;
  std::map<std::string, int> selected;  // normalised name -> line
  for (auto& e : lock.entries) {
    if (!e.marker.empty() && !marker_true(e.marker, e.line)) continue;
    if (!e.requires_python.empty() && !python_fits(e.requires_python, e.line))
      throw Error(ExitCode::check_failed, at(file, e.line) + e.name + "==" + e.version + " requires Python " +
                                              e.requires_python + "; the interpreter is Python " + python);
    if (!e.unusable.empty()) throw input_error(file, e.unusable_line, e.unusable);
    auto [it, fresh] = selected.emplace(normalize_name(e.name), e.line);
    if (!fresh)
      throw input_error(file, e.line, e.name + " is locked twice for this environment (lines " +
                                          std::to_string(it->second) + " and " + std::to_string(e.line) +
                                          "); at most one entry per name may apply");
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

}  // namespace provkit::python
