#include "provkit/envlock.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <toml++/toml.h>

#include "provkit/error.hpp"
#include "provkit/fsutil.hpp"
#include "provkit/hash.hpp"
#include "provkit/markers.hpp"
#include "provkit/wheelname.hpp"

namespace provkit::py {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

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
  std::string algo = value.substr(0, colon), hex = value.substr(colon + 1);
  std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return std::tolower(c); });
  if (algo == "md5" || algo == "sha1" || algo == "sha224")
    throw input_error(file, line, algo + " hashes are too weak; use sha256");
  if (algo != "sha256") throw input_error(file, line, "unsupported hash algorithm '" + algo + "' (envbuild checks sha256)");
  if (!is_hex(hex, 64)) throw input_error(file, line, "sha256 hash must be 64 hex digits, got '" + hex + "'");
  return hex;
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
    auto tokens = split_ws(logical);
    if (tokens[0][0] == '-') {
      // Option lines pip accepts in requirement files.
      std::string opt = tokens[0], value;
      auto eq = opt.find('=');
      if (eq != std::string::npos) {
        value = opt.substr(eq + 1);
        opt = opt.substr(0, eq);
      } else if (tokens.size() > 1) {
        value = tokens[1];
      }
      if (opt == "-i" || opt == "--index-url" || opt == "--extra-index-url") {
        if (value.empty()) throw input_error(file, start_line, opt + " needs a URL");
        lock.index_urls.push_back(value);
      } else if (opt == "-f" || opt == "--find-links") {
        if (value.empty()) throw input_error(file, start_line, opt + " needs a directory");
        fs::path p = value;
        if (p.is_relative() && value.find("://") == std::string::npos) p = path.parent_path() / p;
        lock.find_links.push_back(p.string());
      } else if (opt == "--no-index" || opt == "--only-binary" || opt == "--prefer-binary" || opt == "--trusted-host" ||
                 opt == "--require-hashes") {
        // Already how envbuild works (wheels only, hashes required) or irrelevant to it.
      } else if (opt == "-e" || opt == "--editable") {
        throw input_error(file, start_line, "editable requirements cannot be locked by hash");
      } else if (opt == "-r" || opt == "-c" || opt == "--requirement" || opt == "--constraint") {
        throw input_error(file, start_line, "included files (" + opt + ") are not supported; give one complete lock");
      } else {
        throw input_error(file, start_line, "unknown option '" + opt + "'");
      }
      continue;
    }
    // Requirement: everything before the first token that starts with '-'.
    std::string req;
    std::size_t t = 0;
    for (; t < tokens.size() && tokens[t][0] != '-'; ++t) req += (req.empty() ? "" : " ") + tokens[t];
    LockEntry entry;
    entry.line = start_line;
    auto semi = req.find(';');
    if (semi != std::string::npos) {
      entry.marker = trim(req.substr(semi + 1));
      req = trim(req.substr(0, semi));
      if (entry.marker.empty()) throw input_error(file, start_line, "empty environment marker after ';'");
    }
    if (req.find("://") != std::string::npos || req.find(" @ ") != std::string::npos)
      throw input_error(file, start_line, "URL requirements are not supported; pin name==version with --hash");
    std::smatch m;
    if (!std::regex_match(req, m, req_re)) {
      if (req.find_first_of("<>~!*,") != std::string::npos || req.find("==") == std::string::npos)
        throw input_error(file, start_line, "'" + req + "' is not pinned; every entry must be name==version");
      throw input_error(file, start_line, "cannot parse requirement '" + req + "'");
    }
    entry.name = m[1].str();
    entry.version = m[4].str();
    if (entry.version.find('*') != std::string::npos)
      throw input_error(file, start_line, "'" + req + "' is not pinned to one version");
    for (; t < tokens.size(); ++t) {
      std::string tok = tokens[t], value;
      if (tok.rfind("--hash=", 0) == 0) {
        value = tok.substr(7);
      } else if (tok == "--hash" && t + 1 < tokens.size()) {
        value = tokens[++t];
      } else {
        throw input_error(file, start_line, "unknown option '" + tok + "' on a requirement");
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
  return lock;
}

Lock parse_pylock(const std::string& text, const fs::path& path) {
  const std::string file = path.string();
  Lock lock;
  lock.file = path;
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
    auto ver = (*pkg)["version"].value<std::string>();
    if (!ver) throw input_error(file, line, entry.name + " has no version; every entry must be pinned");
    entry.version = *ver;
    entry.marker = (*pkg)["marker"].value_or(std::string());
    auto* wheels = (*pkg)["wheels"].as_array();
    if (!wheels || wheels->empty()) {
      std::string kind = pkg->contains("sdist") ? "an sdist" : pkg->contains("vcs") ? "a vcs source"
                       : pkg->contains("directory") ? "a directory" : pkg->contains("archive") ? "an archive" : "no source";
      throw input_error(file, line, entry.name + " has " + kind + " and no wheels; envbuild installs wheels only");
    }
    for (auto& wnode : *wheels) {
      auto* w = wnode.as_table();
      int wline = line_of(&wnode);
      if (!w) throw input_error(file, wline, entry.name + ": wheel entry is not a table");
      LockedWheel lw;
      lw.url = (*w)["url"].value_or(std::string());
      lw.path = (*w)["path"].value_or(std::string());
      lw.filename = (*w)["name"].value_or(std::string());
      if (lw.filename.empty()) {
        std::string from = !lw.url.empty() ? lw.url : lw.path;
        auto slash = from.find_last_of('/');
        lw.filename = slash == std::string::npos ? from : from.substr(slash + 1);
      }
      if (lw.filename.empty()) throw input_error(file, wline, entry.name + ": wheel has no name, url or path");
      if (!parse_wheel_name(lw.filename)) throw input_error(file, wline, "'" + lw.filename + "' is not a wheel file name");
      if (auto size = (*w)["size"].value<std::int64_t>()) lw.size = static_cast<std::uint64_t>(*size);
      auto* hashes = (*w)["hashes"].as_table();
      if (!hashes) throw input_error(file, wline, lw.filename + " has no hashes");
      auto sha = (*hashes)["sha256"].value<std::string>();
      if (!sha) throw input_error(file, wline, lw.filename + " has no sha256 hash");
      lw.sha256 = parse_hash("sha256:" + *sha, file, wline);
      entry.sha256.push_back(lw.sha256);
      entry.wheels.push_back(std::move(lw));
    }
    lock.entries.push_back(std::move(entry));
  }
  return lock;
}

Lock read_lock(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw Error(ExitCode::usage, file.string() + ": lock file not found");
  std::string text = read_file(file);
  auto name = file.filename().string();
  bool pylock = name == "pylock.toml" || (name.rfind("pylock.", 0) == 0 && name.size() > 5 &&
                                          name.substr(name.size() - 5) == ".toml");
  return pylock ? parse_pylock(text, file) : parse_requirements(text, file);
}

std::vector<LockEntry> applicable_entries(const Lock& lock, const std::map<std::string, std::string>& env) {
  std::vector<LockEntry> out;
  for (auto& e : lock.entries) {
    bool ok = true;
    if (!e.marker.empty()) {
      try {
        ok = evaluate_marker(e.marker, env);
      } catch (const std::invalid_argument& err) {
        throw input_error(lock.file.string(), e.line, err.what());
      }
    }
    if (ok) out.push_back(e);
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

}  // namespace provkit::py
