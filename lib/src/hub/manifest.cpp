#include "provkit/hub/manifest.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "provkit/checkpoint/header.hpp"
#include "provkit/error.hpp"
#include "provkit/hub/patterns.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/yaml.hpp"

namespace provkit::hub {

bool is_safe_relative_path(std::string_view path) { return util::is_safe_relative_path(path); }

std::string_view reason_name(ManifestRefusal) { return reason_name(Reason::invalid_input); }
ExitCode exit_code(ManifestRefusal) { return ExitCode::usage; }

std::string_view refusal_name(ManifestRefusal r) {
  switch (r) {
    case ManifestRefusal::malformed: return "malformed";
    case ManifestRefusal::unsupported_version: return "unsupported_version";
    case ManifestRefusal::missing: return "missing";
    case ManifestRefusal::unknown_key: return "unknown_key";
    case ManifestRefusal::duplicate: return "duplicate";
    case ManifestRefusal::not_pinned: return "not_pinned";
    case ManifestRefusal::unsafe_path: return "unsafe_path";
    case ManifestRefusal::unhashed: return "unhashed";
    case ManifestRefusal::invalid_value: return "invalid_value";
    case ManifestRefusal::unknown_part: return "unknown_part";
    case ManifestRefusal::sizes_overflow: return "sizes_overflow";
    case ManifestRefusal::file_and_folder: return "file_and_folder";
    case ManifestRefusal::gguf_split_parts: return "gguf_split_parts";
  }
  return "malformed";
}

namespace {

struct Parser {
  const std::string& file;
  using R = ManifestRefusal;

  int line_of(const YAML::Node& n) const { return util::yaml_line(n); }
  [[noreturn]] void fail(R reason, const YAML::Node& n, const std::string& what) const {
    throw input_error(reason, file, line_of(n), what);
  }

  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(R::malformed, n, key + " must be a single value");
    return n.Scalar();
  }

  std::uint64_t size(const YAML::Node& n, const std::string& key) const {
    std::string s = scalar(n, key);
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos)
      fail(R::invalid_value, n, key + " must be a non-negative integer (bytes), not '" + s + "'");
    return std::stoull(s);
  }

  std::string hex(const YAML::Node& n, const std::string& key, std::size_t len) const {
    std::string s = scalar(n, key);
    check_hex(s, key, len, line_of(n));
    return s;
  }

  // Keys of a mapping, each once, only the known ones.
  void check_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where) const {
    std::set<std::string> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(R::malformed, kv.first, "unexpected key in " + where);
      const std::string& k = kv.first.Scalar();
      if (!known.count(k)) fail(R::unknown_key, kv.first, util::concat({"unknown key '", k, "' in ", where}));
      if (!seen.insert(k).second) fail(R::duplicate, kv.first, util::concat({"key '", k, "' given twice in ", where}));
    }
  }

  Manifest parse(std::string_view text) {
    YAML::Node root = util::load_single_yaml_document(text, file);
    if (!root.IsMap())
      throw input_error(R::malformed, file, root.IsDefined() ? line_of(root) : 0, "a manifest must be a YAML mapping");
    check_keys(root, {"manifest", "repo", "type", "revision", "ref", "files", "assemble"}, "the manifest");

    Manifest m;
    m.source = file;
    auto need = [&](const char* key) {
      YAML::Node n = root[key];
      if (!n) fail(R::missing, root, std::string("missing '") + key + "'");
      return n;
    };
    YAML::Node version = need("manifest");
    if (scalar(version, "manifest") != std::to_string(Manifest::kVersion))
      fail(R::unsupported_version, version,
           "unknown manifest format version '" + version.Scalar() + "' (this release reads version 1)");

    YAML::Node repo = need("repo");
    m.repo.id = scalar(repo, "repo");
    check_repo(m.repo.id, line_of(repo));
    if (YAML::Node type = root["type"]) {
      auto t = hub::parse_repo_type(scalar(type, "type"));
      if (!t) fail(R::invalid_value, type, "type must be model, dataset or space, not '" + type.Scalar() + "'");
      m.repo.type = *t;
    }
    YAML::Node rev = need("revision");
    m.revision = scalar(rev, "revision");
    check_revision(m.revision, line_of(rev));
    if (YAML::Node ref = root["ref"]) {
      m.ref = scalar(ref, "ref");
      check_ref(*m.ref, line_of(ref));
    }

    YAML::Node files = need("files");
    if (!files.IsSequence()) fail(R::malformed, files, "files must be a list");
    if (files.size() == 0) fail(R::missing, files, "files is empty: a manifest names the files to fetch");
    std::map<std::string, int> first_line;
    for (const auto& f : files) {
      if (!f.IsMap()) fail(R::malformed, f, "each entry of files must be a mapping with path, size and sha256/git_oid");
      check_keys(f, {"path", "size", "sha256", "git_oid"}, "a files entry");
      ManifestFile mf;
      mf.line = line_of(f);
      if (!f["path"]) fail(R::missing, f, "a files entry has no path");
      mf.path = scalar(f["path"], "path");
      check_path(mf.path, "path", line_of(f["path"]));
      check_unique(first_line, mf.path, line_of(f["path"]));
      if (!f["size"]) fail(R::missing, f, "file '" + mf.path + "' has no size");
      mf.size = size(f["size"], "size");
      if (f["sha256"]) mf.sha256 = hex(f["sha256"], "sha256", 64);
      if (f["git_oid"]) mf.git_oid = hex(f["git_oid"], "git_oid", 40);
      check_hashed(mf);
      m.files.push_back(std::move(mf));
    }

    if (YAML::Node assemble = root["assemble"]) {
      if (!assemble.IsSequence()) fail(R::malformed, assemble, "assemble must be a list");
      std::set<std::string> outputs;
      for (const auto& a : assemble) {
        if (!a.IsMap()) fail(R::malformed, a, "each entry of assemble must be a mapping with output and parts");
        check_keys(a, {"output", "parts", "sha256", "size"}, "an assemble entry");
        AssembleEntry e;
        e.line = line_of(a);
        if (!a["output"]) fail(R::missing, a, "an assemble entry has no output");
        e.output = scalar(a["output"], "output");
        check_output(first_line, outputs, e.output, line_of(a["output"]));
        YAML::Node parts = a["parts"];
        if (!parts) fail(R::missing, a, "assemble entry '" + e.output + "' has no parts");
        if (!parts.IsSequence() || parts.size() == 0)
          fail(R::malformed, parts, "parts must be a non-empty list of paths from files");
        for (const auto& p : parts) {
          std::string part = scalar(p, "a part");
          check_part(first_line, part, line_of(p));
          e.parts.push_back(part);
        }
        if (a["sha256"]) e.sha256 = hex(a["sha256"], "sha256", 64);
        if (a["size"]) e.size = size(a["size"], "size");
        if (auto refusal = gguf_split_refusal(e)) fail(R::gguf_split_parts, parts, *refusal);
        m.assemble.push_back(std::move(e));
      }
    }
    check_total(m);
    check_files_and_folders(m);
    return m;
  }

  // The rules on values, for a manifest read from YAML and for one made in memory (validate): one set.
  void check_repo(const std::string& id, int line) const {
    if (!hub::is_valid_repo_id(id))
      throw input_error(R::invalid_value, file, line, "repo '" + id + "' is not a Hub repository id (org/name)");
  }
  void check_revision(const std::string& revision, int line) const {
    if (!util::is_hex(revision, 40) || revision.find_first_of("ABCDEF") != std::string::npos)
      throw input_error(R::not_pinned, file, line,
                        "revision must be a 40-hex commit id ('" + revision +
                            "' is not; manifests pin commits, not branches or tags)");
  }
  void check_ref(const std::string& ref, int line) const {
    if (!is_valid_ref_name(ref))
      throw input_error(R::invalid_value, file, line,
                        "ref '" + ref + "' is not a branch or tag name (it becomes refs/<ref> in the cache)");
  }
  void check_path(const std::string& path, const char* what, int line) const {
    if (!is_safe_relative_path(path))
      throw input_error(R::unsafe_path, file, line,
                        util::concat({what, " '", path,
                                      "' must be relative, without '..', '.', empty segments or backslashes"}));
  }
  void check_unique(std::map<std::string, int>& first_line, const std::string& path, int line) const {
    if (auto [it, fresh] = first_line.emplace(path, line); !fresh)
      throw input_error(R::duplicate, file, line,
                        "path '" + path + "' is listed twice (first at line " + std::to_string(it->second) + ")");
  }
  void check_hashed(const ManifestFile& mf) const {
    if (!mf.sha256 && !mf.git_oid)
      throw input_error(R::unhashed, file, mf.line, "file '" + mf.path + "' needs sha256 or git_oid");
  }
  void check_output(const std::map<std::string, int>& first_line, std::set<std::string>& outputs,
                    const std::string& output, int line) const {
    check_path(output, "output", line);
    if (first_line.count(output))
      throw input_error(R::unknown_part, file, line, "output '" + output + "' is also one of the files");
    if (!outputs.insert(output).second)
      throw input_error(R::duplicate, file, line, "output '" + output + "' is assembled twice");
  }
  void check_part(const std::map<std::string, int>& first_line, const std::string& part, int line) const {
    if (!first_line.count(part))
      throw input_error(R::unknown_part, file, line, "part '" + part + "' is not one of the files");
  }
  void check_hex(const std::string& s, const std::string& key, std::size_t len, int line) const {
    if (!util::is_hex(s, len) || s.find_first_of("ABCDEF") != std::string::npos)
      throw input_error(R::invalid_value, file, line,
                        key + " must be " + std::to_string(len) + " lower-case hex digits");
  }

  // A manifest made in memory (pin_from_tree), its entries at the lines to_yaml() gives them: the checks
  // parse() makes of the same text, without building the text's YAML tree (about 2.5 KB a file).
  void validate(Manifest& m) const {
    check_repo(m.repo.id, 2);  // manifest, repo, type, revision, [ref], files:, then the first entry
    check_revision(m.revision, 4);
    if (m.ref) check_ref(*m.ref, 5);
    int line = m.ref ? 7 : 6;
    if (m.files.empty())
      throw input_error(R::missing, file, line - 1, "files is empty: a manifest names the files to fetch");
    std::map<std::string, int> first_line;
    for (auto& f : m.files) {
      f.line = line;
      check_path(f.path, "path", line);
      check_unique(first_line, f.path, line);
      if (f.sha256) check_hex(*f.sha256, "sha256", 64, line + 2);
      if (f.git_oid) check_hex(*f.git_oid, "git_oid", 40, line + 2 + (f.sha256 ? 1 : 0));
      check_hashed(f);
      line += 2 + (f.sha256 ? 1 : 0) + (f.git_oid ? 1 : 0);
    }
    std::set<std::string> outputs;
    line += 1;  // assemble:
    for (auto& a : m.assemble) {
      a.line = line;
      check_output(first_line, outputs, a.output, line);
      if (a.parts.empty())
        throw input_error(R::malformed, file, line + 1, "parts must be a non-empty list of paths from files");
      for (std::size_t i = 0; i < a.parts.size(); ++i)
        check_part(first_line, a.parts[i], line + 2 + static_cast<int>(i));
      line += 2 + static_cast<int>(a.parts.size());
      if (a.sha256) check_hex(*a.sha256, "sha256", 64, line++);
      if (a.size) ++line;
    }
    check_total(m);
    check_files_and_folders(m);
  }

  // Every sum a plan makes of these sizes (bytes to fetch, disk needed, assembly outputs) is at most this
  // total: refused here, at the line that takes it past 2^64 - 1, no plan can wrap (four files of 2^62
  // bytes once added up to a disk need of 0).
  void check_total(const Manifest& m) const {
    std::uint64_t total = 0;
    auto add = [&](std::uint64_t n, const std::string& path, int line) {
      auto sum = util::checked_add(total, n);
      if (!sum)
        throw input_error(R::sizes_overflow, file, line,
                          "the sizes of the files and assembly outputs add up past 2^64 - 1 with '" + path + "' (" +
                              std::to_string(n) + " bytes); sizes that large cannot all be right");
      total = *sum;
    };
    std::map<std::string, std::uint64_t> size_of;
    for (const auto& f : m.files) add(f.size, f.path, f.line), size_of[f.path] = f.size;
    for (const auto& a : m.assemble) {
      if (a.size) {
        add(*a.size, a.output, a.line);
        continue;
      }
      for (const auto& p : a.parts) add(size_of[p], a.output, a.line);  // the output is its parts' bytes
    }
  }

  // A path that is a file cannot also be a folder holding another (`x.txt` and `x.txt/inner`): no snapshot
  // or local dir can hold both, so such a manifest is refused before a byte is fetched, naming both paths.
  void check_files_and_folders(const Manifest& m) const {
    std::map<std::string_view, int> line_of_path;
    for (const auto& f : m.files) line_of_path.emplace(f.path, f.line);
    for (const auto& a : m.assemble) line_of_path.emplace(a.output, a.line);
    for (const auto& [path, line] : line_of_path)
      for (auto slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
        if (auto folder = line_of_path.find(path.substr(0, slash)); folder != line_of_path.end())
          throw input_error(R::file_and_folder, file, line,
                            util::concat({"'", path, "' lies in the folder '", folder->first,
                                          "', which is a file (line ", std::to_string(folder->second),
                                          "): no snapshot can hold both; nothing was fetched"}));
  }
};

// Paths are always double-quoted so that no name can turn into YAML syntax;
// non-ASCII characters are written as \u escapes (paths are valid UTF-8).
std::string yaml_quoted(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    std::size_t start = i;
    long cp = util::next_code_point(s, i);
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp >= 0x20 && cp < 0x7f) {
      out += static_cast<char>(cp);
    } else if (cp < 0) {
      out.append(s.substr(start, i - start));  // not reached for validated paths
    } else {
      char buf[16];
      std::snprintf(buf, sizeof buf, cp > 0xffff ? "\\U%08lX" : "\\u%04lX", cp);
      out += buf;
    }
  }
  return out + "\"";
}

}  // namespace

Manifest Manifest::parse(std::string_view text, const std::string& filename) { return Parser{filename}.parse(text); }

void Manifest::validate(const std::string& filename) { Parser{filename}.validate(*this); }

Manifest Manifest::load(const std::filesystem::path& path) {
  std::string text;
  try {
    text = util::read_file(path);
  } catch (const Error& e) {
    throw Error(ExitCode::usage, e.what());
  }
  return parse(text, path.string());
}

std::string Manifest::to_yaml() const {
  std::string y;
  y += "manifest: " + std::to_string(kVersion) + "\n";
  y += "repo: " + repo.id + "\n";
  y += "type: " + hub::repo_type_name(repo.type) + "\n";
  y += "revision: " + revision + "\n";
  if (ref) y += "ref: " + yaml_quoted(*ref) + "\n";
  y += "files:\n";
  for (const auto& f : files) {
    y += "  - path: " + yaml_quoted(f.path) + "\n";
    y += "    size: " + std::to_string(f.size) + "\n";
    if (f.sha256) y += "    sha256: " + *f.sha256 + "\n";
    if (f.git_oid) y += "    git_oid: " + *f.git_oid + "\n";
  }
  if (!assemble.empty()) {
    y += "assemble:\n";
    for (const auto& a : assemble) {
      y += "  - output: " + yaml_quoted(a.output) + "\n";
      y += "    parts:\n";
      for (const auto& p : a.parts) y += "      - " + yaml_quoted(p) + "\n";
      if (a.sha256) y += "    sha256: " + *a.sha256 + "\n";
      if (a.size) y += "    size: " + std::to_string(*a.size) + "\n";
    }
  }
  return y;
}

std::string upstream_state_name(UpstreamState s) {
  switch (s) {
    case UpstreamState::ok: return "OK";
    case UpstreamState::not_in_tree: return "NOT IN HUB TREE";
    case UpstreamState::changed: return "UPSTREAM CHANGED";
  }
  return "?";
}

std::vector<UpstreamCheck> compare_with_tree(const Manifest& manifest, const std::vector<hub::TreeEntry>& tree) {
  std::map<std::string_view, const hub::TreeEntry*> by_path;
  std::map<std::string, const ManifestFile*> by_etag;
  for (const auto& e : tree)
    if (e.is_file()) by_path[e.path] = &e;
  std::vector<UpstreamCheck> out;
  for (const auto& f : manifest.files) {
    UpstreamCheck c;
    c.path = f.path;
    auto it = by_path.find(f.path);
    if (it == by_path.end()) {
      c.state = UpstreamState::not_in_tree;
      out.push_back(std::move(c));
      continue;
    }
    const hub::TreeEntry& e = *it->second;
    c.entry = &e;
    std::vector<std::string> diffs;
    if (e.content_size() != f.size)
      diffs.push_back("size " + std::to_string(e.content_size()) + " upstream, " + std::to_string(f.size) +
                      " in the manifest");
    if (e.lfs) {
      // The LFS oid is the content's sha256; the tree's git oid is the pointer's.
      if (!f.sha256) diffs.emplace_back("an LFS file upstream, but the manifest has no sha256 for it");
      else if (*f.sha256 != e.lfs->oid)
        diffs.push_back("sha256 " + e.lfs->oid + " upstream, " + *f.sha256 + " in the manifest");
    } else if (f.git_oid && *f.git_oid != e.oid) {
      diffs.push_back("git oid " + e.oid + " upstream, " + *f.git_oid + " in the manifest");
    }
    if (diffs.empty()) {
      // The tree's ids are well-formed (parse_tree_page) and, where the
      // manifest pins one, equal to it; the one left unpinned is verified
      // against the content.
      if (e.lfs) {
        c.etag = *f.sha256;
      } else if (f.git_oid) {
        c.etag = *f.git_oid;
      } else {
        c.etag = e.oid;
        c.git_oid_to_verify = e.oid;
      }
      auto differ = [](const auto& a, const auto& b) { return a && b && *a != *b; };
      auto [first, fresh] = by_etag.emplace(c.etag, &f);
      if (!fresh && (first->second->size != f.size || differ(first->second->sha256, f.sha256) ||
                     differ(first->second->git_oid, f.git_oid)))
        diffs.push_back("the tree names its blob " + c.etag + " as it does for '" + first->second->path +
                        "', whose content the manifest says is other");
    }
    if (!diffs.empty()) {
      c.state = UpstreamState::changed;
      c.etag.clear();
      c.git_oid_to_verify.reset();
      for (std::size_t i = 0; i < diffs.size(); ++i) c.detail += (i ? "; " : "") + diffs[i];
    }
    out.push_back(std::move(c));
  }
  return out;
}

const ManifestFile* Manifest::find(std::string_view path) const {
  for (const auto& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

std::optional<std::pair<std::string, std::string>> split_repo_revision(const std::string& text) {
  auto at = text.find('@');
  std::string id = text.substr(0, at), revision = at == std::string::npos ? "main" : text.substr(at + 1);
  if (!is_valid_repo_id(id) || revision.empty()) return std::nullopt;
  return std::pair{id, revision};
}

bool is_valid_ref_name(std::string_view name) {
  if (!is_safe_relative_path(name)) return false;
  // A 40-hex name is a commit, which huggingface_hub never writes a ref for.
  return !(name.size() == 40 && util::is_hex(std::string(name), 40));
}

std::optional<std::string> ref_for_revision(const std::string& revision, const std::string& commit) {
  if (revision == commit || !is_valid_ref_name(revision)) return std::nullopt;
  return revision;
}

std::pair<std::string, std::string> parse_repo_revision(const std::string& text) {
  if (auto r = split_repo_revision(text)) return *r;
  throw Error(ExitCode::usage, "'" + text + "' is not REPO[@REVISION] (e.g. org/name@main)");
}

AssemblySpecError::AssemblySpecError(const std::string& spec, std::optional<std::string> part_)
    : Error(ExitCode::usage, !part_ ? "'" + spec + "' is not OUTPUT=PART,PART,... or OUTPUT=GLOB"
                                    : "part '" + *part_ + "' is not one of the manifest's files"),
      part(std::move(part_)) {}

std::optional<std::string> gguf_split_refusal(const AssembleEntry& e) {
  const auto split = static_cast<std::size_t>(std::count_if(e.parts.begin(), e.parts.end(), [](const std::string& p) {
    return checkpoint::is_gguf_split_name(p);
  }));
  if (split == 0) return std::nullopt;
  const std::string which = split == e.parts.size()
                                ? (split == 1 ? e.parts.front() + " is a gguf-split part, a whole GGUF file"
                                              : e.parts.front() + " and the other " + std::to_string(split - 1) +
                                                    " parts are gguf-split parts, each a whole GGUF file")
                                : std::to_string(split) + " of the " + std::to_string(e.parts.size()) + " parts (" +
                                      *std::find_if(e.parts.begin(), e.parts.end(),
                                                    [](const std::string& p) {
                                                      return checkpoint::is_gguf_split_name(p);
                                                    }) +
                                      (split > 1 ? ", ..." : "") + ") " +
                                      (split == 1 ? "is a gguf-split part, a whole GGUF file"
                                                  : "are gguf-split parts, each a whole GGUF file");
  return which + " (split.no, split.count), not byte-split pieces; " + gguf_split_advice(e);
}

std::string gguf_split_advice(const AssembleEntry& e) {
  auto split = std::find_if(e.parts.begin(), e.parts.end(),
                            [](const std::string& p) { return checkpoint::is_gguf_split_name(p); });
  const std::string& first = split != e.parts.end() ? *split : e.parts.front();
  std::string advice = "joined into " + e.output +
                       " they make a file llama.cpp cannot load. Fetch them without assembling them: llama.cpp loads a "
                       "split set from its first part (llama-server -m " +
                       first + "), and llama-gguf-split --merge " + first + " " + e.output + " makes one file of them";
  if (!checkpoint::is_gguf_split_name(first)) {
    std::string count = std::to_string(e.parts.size());
    count.insert(0, count.size() < 5 ? 5 - count.size() : 0, '0');
    advice += " (both find the other parts by gguf-split's names: rename the parts, in order, NAME-00001-of-" + count +
              ".gguf, NAME-00002-of-" + count + ".gguf and so on first)";
  }
  return advice;
}

AssemblySpecError AssemblySpecError::no_sum(const std::string& output, const std::string& why) {
  return AssemblySpecError(Reason::invalid_input, output + ": " + why);
}

AssemblySpecError AssemblySpecError::gguf_split(const std::string& output, const std::string& refusal) {
  return AssemblySpecError(ManifestRefusal::gguf_split_parts, output + ": " + refusal);
}

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && digit(a[i2])) ++i2;
      while (j2 < b.size() && digit(b[j2])) ++j2;
      // Leading zeros aside, the longer run is the larger number; same length: compare the digits.
      auto x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      auto strip = [](std::string_view v) { return v.substr(std::min(v.find_first_not_of('0'), v.size())); };
      auto xs = strip(x), ys = strip(y);
      if (xs.size() != ys.size()) return xs.size() < ys.size();
      if (xs != ys) return xs < ys;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

SumsMatch checksum_from_sums(std::string_view sums, const std::string& name) {
  auto base = [](std::string_view p) {
    auto s = p.rfind('/');
    return s == std::string_view::npos ? p : p.substr(s + 1);
  };
  SumsMatch out;
  std::vector<std::pair<std::string, std::string>> by_base;  // (listed path, sha256) with name's basename
  std::size_t pos = 0;
  while (pos < sums.size()) {
    auto nl = sums.find('\n', pos);
    std::string_view line = sums.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? sums.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() < 66 || line[64] != ' ') continue;
    std::string hex(line.substr(0, 64));
    for (auto& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view file = line.substr(65);
    if (!file.empty() && (file[0] == ' ' || file[0] == '*')) file.remove_prefix(1);  // text or binary mode
    if (file.starts_with("./")) file.remove_prefix(2);
    if (!util::is_hex(hex, 64)) continue;
    // The full relative path decides first: BF16/model.gguf listed before Q8_0/model.gguf is not Q8_0's line.
    if (file == name) {
      out.sha256 = hex;
      out.candidates.clear();
      return out;
    }
    if (base(file) == base(name)) by_base.emplace_back(std::string(file), hex);
  }
  // A basename alone only when one line has it (the same sum listed twice is one answer).
  bool one = !by_base.empty() && std::all_of(by_base.begin(), by_base.end(),
                                             [&](const auto& l) { return l.second == by_base.front().second; });
  if (one) out.sha256 = by_base.front().second;
  else
    for (auto& l : by_base) out.candidates.push_back(std::move(l.first));
  return out;
}

AssembleEntry parse_assembly(const Manifest& m, std::string spec, const std::function<std::string()>& repo_sums) {
  AssembleEntry e;
  const std::string from_sums = ":SHA256SUMS";
  bool want_sums = spec.size() > from_sums.size() && spec.ends_with(from_sums);
  if (want_sums) {
    spec.resize(spec.size() - from_sums.size());
  } else if (auto colon = spec.rfind(':'); colon != std::string::npos && util::is_hex(spec.substr(colon + 1), 64)) {
    e.sha256 = spec.substr(colon + 1);
    spec.resize(colon);
  }
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw AssemblySpecError(spec, std::nullopt);
  e.output = spec.substr(0, eq);
  util::CheckedSum size("the sizes of the parts of " + e.output);
  std::string rest = spec.substr(eq + 1);
  if ((rest.find_first_of("*?[") != std::string::npos || rest.back() == '/') && rest.find(',') == std::string::npos) {
    // OUT=GLOB: the manifest's files it matches (the --include rule), in natural order (part-2 before part-10).
    std::vector<std::string> parts;
    const RepoPattern glob(rest);
    for (const auto& f : m.files)
      if (glob.matches(f.path)) parts.push_back(f.path);
    if (parts.empty()) throw AssemblySpecError(spec, rest);
    std::sort(parts.begin(), parts.end(), natural_less);
    rest.clear();
    for (const auto& p : parts) rest += (rest.empty() ? "" : ",") + p;
  }
  if (want_sums) {
    std::string sums = repo_sums ? repo_sums() : std::string();
    auto match = checksum_from_sums(sums, e.output);
    if (!match.candidates.empty()) {
      std::string names;
      for (const auto& c : match.candidates) names += (names.empty() ? "" : ", ") + c;
      throw AssemblySpecError::no_sum(e.output,
                                      "the repo's SHA256SUMS has no line for that path and several with its name (" +
                                          names + "); name the output by its full path or give :SHA256");
    }
    e.sha256 = match.sha256;
    if (!e.sha256) throw AssemblySpecError::no_sum(e.output, "the repo's SHA256SUMS has no line for it");
  }
  for (std::size_t pos = 0; pos <= rest.size();) {
    auto comma = rest.find(',', pos);
    std::string part = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const ManifestFile* f = m.find(part);
    if (!f) throw AssemblySpecError(spec, part);
    size.add(f->size, part);
    e.parts.push_back(part);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  e.size = size.value();
  if (auto refusal = gguf_split_refusal(e)) throw AssemblySpecError::gguf_split(e.output, *refusal);
  return e;
}

}  // namespace provkit::hub
