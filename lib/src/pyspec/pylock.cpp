// PEP 751 pylock.toml read as packaging.pylock reads it: the whole file is
// validated (types, required keys, normalised names, versions, markers,
// specifiers, sources, wheel names against their package) before anything is
// selected, so an invalid entry for another platform is refused as well; then
// what envbuild cannot install (an sdist, a directory, a VCS checkout, a wheel
// without a sha256) is kept as the entry's `unusable` reason, refused only if
// the entry is selected.
#include <toml++/toml.h>

#include <algorithm>

#include "markers.hpp"
#include "provkit/error.hpp"
#include "provkit/pyspec/lock.hpp"
#include "provkit/pyspec/pep440.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::pyspec {

namespace {

constexpr std::size_t max_toml_depth = 32;  // brackets and braces, and parts of one dotted key

// toml++ parses nesting and dotted keys recursively; a hostile file of 50,000
// key parts or brackets exhausts the stack. One linear pass over the text
// (strings and comments skipped) bounds both before toml++ sees it.
void check_toml_depth(const std::string& text, const std::string& file) {
  std::size_t depth = 0, dots = 0;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      dots = 0;
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      bool multi = text.compare(i, 3, std::string(3, c)) == 0;
      i += multi ? 3 : 1;
      for (; i < text.size(); ++i) {
        if (text[i] == '\n') ++line;
        if (c == '"' && text[i] == '\\') {
          if (i + 1 < text.size() && text[i + 1] == '\n') ++line;
          ++i;
          continue;
        }
        if (text[i] != c) continue;
        if (!multi) break;
        if (text.compare(i, 3, std::string(3, c)) == 0) {
          while (i + 3 < text.size() && text[i + 3] == c) ++i;  // """" ends with a quote inside
          i += 2;
          break;
        }
      }
    } else if (c == '[' || c == '{') {
      if (++depth > max_toml_depth)
        throw input_error(LockRefusal::malformed, file, line,
                          "arrays and tables nest deeper than " + std::to_string(max_toml_depth) + " levels");
      dots = 0;
    } else if (c == ']' || c == '}') {
      if (depth) --depth;
      dots = 0;
    } else if (c == '=' || c == ',') {
      dots = 0;
    } else if (c == '.') {
      if (++dots >= max_toml_depth)
        throw input_error(LockRefusal::malformed, file, line,
                          "a dotted key of more than " + std::to_string(max_toml_depth) + " parts");
    }
  }
}

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "datetime";
    case toml::node_type::array: return "array";
    case toml::node_type::table: return "table";
    default: return "nothing";
  }
}

// packaging's is_normalized_name: lower-case letters and digits, single '-'
// between them.
bool is_normalized(const std::string& name) {
  if (name.empty() || name.front() == '-' || name.back() == '-') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && name[i + 1] != '-');
    if (!ok) return false;
  }
  return true;
}

// An sdist file name: NAME-VERSION.tar.gz or .zip, split at the last '-'.
bool parse_sdist_name(const std::string& filename, std::string& name, std::string& version) {
  std::string stem;
  if (filename.size() > 7 && filename.compare(filename.size() - 7, 7, ".tar.gz") == 0)
    stem = filename.substr(0, filename.size() - 7);
  else if (filename.size() > 4 && filename.compare(filename.size() - 4, 4, ".zip") == 0)
    stem = filename.substr(0, filename.size() - 4);
  else return false;
  auto dash = stem.rfind('-');
  if (dash == std::string::npos || dash == 0) return false;
  name = stem.substr(0, dash);
  version = stem.substr(dash + 1);
  return parse_version(version).has_value();
}

std::string path_name(const std::string& path) {
  auto slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
std::string url_name(const std::string& url) {
  std::string p = url.substr(0, url.find_first_of("?#"));
  return util::percent_decode(p.substr(p.find_last_of('/') + 1));
}

class Validator {
 public:
  explicit Validator(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::node* at, const std::string& what, const std::string& ctx,
                         LockRefusal reason = LockRefusal::malformed) const {
    throw input_error(reason, file_, line(at), what + (ctx.empty() ? "" : " in '" + ctx + "'"));
  }
  int line(const toml::node* n) const { return n ? static_cast<int>(n->source().begin.line) : 0; }
  static std::string key(const std::string& ctx, const char* k) { return ctx.empty() ? k : ctx + "." + k; }

  // A value of one TOML type, or null when absent; the wrong type is an error.
  const toml::node* get(const toml::table& t, const char* k, toml::node_type want, const std::string& ctx,
                        bool required = false) const {
    const toml::node* n = t.get(k);
    if (!n) {
      if (required) fail(&t, "Missing required value", key(ctx, k));
      return nullptr;
    }
    if (n->type() != want) {
      const char* wanted = want == toml::node_type::string      ? "string"
                           : want == toml::node_type::integer   ? "integer"
                           : want == toml::node_type::boolean   ? "boolean"
                           : want == toml::node_type::array     ? "array"
                           : want == toml::node_type::date_time ? "datetime"
                                                                : "table";
      fail(n, std::string("Unexpected type ") + type_name(*n) + " (expected " + wanted + ")", key(ctx, k));
    }
    return n;
  }
  std::string str(const toml::table& t, const char* k, const std::string& ctx, bool required = false) const {
    auto* n = get(t, k, toml::node_type::string, ctx, required);
    return n ? **n->as_string() : std::string();
  }
  // An array whose items are all of one type.
  const toml::array* array_of(const toml::table& t, const char* k, toml::node_type item, const std::string& ctx,
                              bool required = false) const {
    auto* n = get(t, k, toml::node_type::array, ctx, required);
    if (!n) return nullptr;
    auto* a = n->as_array();
    for (std::size_t i = 0; i < a->size(); ++i)
      if ((*a)[i].type() != item) {
        const char* wanted = item == toml::node_type::string ? "string" : "table";
        fail(&(*a)[i], std::string("Unexpected type ") + type_name((*a)[i]) + " (expected " + wanted + ")",
             key(ctx, k) + "[" + std::to_string(i) + "]");
      }
    return a;
  }
  void marker(const toml::node* n, const std::string& ctx) const {
    try {
      Marker::parse(**n->as_string());
    } catch (const Error& e) {
      fail(n, std::string("invalid marker: ") + e.what(), ctx, LockRefusal::invalid_marker);
    }
  }
  void specifiers(const toml::node* n, const std::string& ctx) const {
    try {
      parse_specifier_set(**n->as_string());
    } catch (const Error& e) {
      fail(n, std::string("invalid specifier: ") + e.what(), ctx, LockRefusal::invalid_specifier);
    }
  }
  std::optional<std::uint64_t> size(const toml::table& t, const std::string& ctx) const {
    auto* n = get(t, "size", toml::node_type::integer, ctx);
    if (!n) return std::nullopt;
    auto v = **n->as_integer();
    if (v < 0) fail(n, "a size cannot be negative", key(ctx, "size"));
    return static_cast<std::uint64_t>(v);
  }
  // The sha256 as written, or empty: a hashes table must be there, non-empty
  // (packaging; uv writes {} for --find-links wheels, refused here with what to
  // do instead), its values strings. A sha256 that is not 64 hex digits is
  // refused only if selected (packaging does not look at the digest).
  std::string hashes(const toml::table& t, const std::string& ctx, const std::string& filename) const {
    auto* n = get(t, "hashes", toml::node_type::table, ctx, true);
    auto* h = n->as_table();
    const std::string hctx = key(ctx, "hashes");
    if (h->empty())
      fail(n,
           "At least one hash must be provided: the lock has no hash for " + filename +
               " (hashes = {}: uv writes that for wheels from a local --find-links "
               "directory); envbuild needs a sha256 for every wheel: lock from an index that serves hashes, or write a "
               "hashed requirements lock with `uv pip compile --generate-hashes --find-links DIR`, which hashes local "
               "wheels",
           hctx, LockRefusal::unhashed);
    for (auto& [name, value] : *h)
      if (!value.is_string()) fail(&value, "Hash values must be strings", hctx);
    auto* sha = h->get("sha256");
    return sha ? util::lower(**sha->as_string()) : std::string();
  }
  // A file source (archive, sdist, wheel): path or url, size, upload-time, hashes.
  struct FileSource {
    std::string name, url, path, sha256;
    std::optional<std::uint64_t> size;
  };
  FileSource file_source(const toml::table& t, const std::string& ctx, bool named) const {
    FileSource f;
    if (named) f.name = str(t, "name", ctx);
    f.url = str(t, "url", ctx);
    f.path = str(t, "path", ctx);
    f.size = size(t, ctx);
    get(t, "upload-time", toml::node_type::date_time, ctx);
    f.sha256 = hashes(t, ctx, filename(f));
    if (f.path.empty() && f.url.empty()) fail(&t, "path or url must be provided", ctx);
    return f;
  }
  std::string filename(const FileSource& f) const {
    return !f.name.empty() ? f.name : !f.path.empty() ? path_name(f.path) : url_name(f.url);
  }

  const std::string file_;
};

// envbuild fetches http(s) and reads local files; anything else is refused.
bool fetchable(const std::string& url) {
  std::string scheme = util::lower(url.substr(0, url.find(':')));
  return url.find("://") != std::string::npos && (scheme == "http" || scheme == "https" || scheme == "file");
}

}  // namespace

Lock parse_pylock(const std::string& text, const fs::path& path) {
  const std::string file = path.string();
  Lock lock;
  lock.file = path;
  lock.pylock = true;
  check_toml_depth(text, file);
  toml::table doc;
  try {
    doc = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw input_error(LockRefusal::malformed, file, static_cast<int>(e.source().begin.line),
                      std::string(e.description()));
  }
  Validator v(file);
  using T = toml::node_type;

  // Top level, in packaging's order.
  auto* lv = v.get(doc, "lock-version", T::string, "", true);
  auto version = parse_version(**lv->as_string());
  if (!version) v.fail(lv, "Invalid version: '" + **lv->as_string() + "'", "lock-version");
  Version one, two;
  one.release = {"1"};
  two.release = {"2"};
  if (compare(*version, one) < 0 || compare(*version, two) >= 0)
    v.fail(lv, "unsupported lock-version " + **lv->as_string() + " (envbuild reads 1.x)", "lock-version");
  if (auto* envs = v.array_of(doc, "environments", T::string, "")) {
    for (std::size_t i = 0; i < envs->size(); ++i) {
      v.marker(&(*envs)[i], "environments[" + std::to_string(i) + "]");
      lock.environments.push_back(**(*envs)[i].as_string());
    }
    lock.environments_line = v.line(envs);
    lock.has_environments = true;
  }
  if (auto* extras = v.array_of(doc, "extras", T::string, "")) {
    for (std::size_t i = 0; i < extras->size(); ++i) {
      std::string x = **(*extras)[i].as_string();
      if (!is_normalized(x))
        v.fail(&(*extras)[i], "Name '" + x + "' is not normalized", "extras[" + std::to_string(i) + "]");
      lock.extras.push_back(x);
    }
  }
  for (auto [k, out] :
       {std::pair{"dependency-groups", &lock.dependency_groups}, {"default-groups", &lock.default_groups}})
    if (auto* a = v.array_of(doc, k, T::string, ""))
      for (auto& item : *a) out->push_back(**item.as_string());
  v.str(doc, "created-by", "", true);
  if (auto* rp = v.get(doc, "requires-python", T::string, "")) {
    v.specifiers(rp, "requires-python");
    lock.requires_python = **rp->as_string();
    lock.requires_python_line = v.line(rp);
  }
  auto* packages = v.array_of(doc, "packages", T::table, "", true);
  v.get(doc, "tool", T::table, "");

  for (std::size_t index = 0; index < packages->size(); ++index) {
    const toml::table& pkg = *(*packages)[index].as_table();
    const std::string ctx = "packages[" + std::to_string(index) + "]";
    LockEntry entry;
    entry.line = v.line(&pkg);
    entry.name = v.str(pkg, "name", ctx, true);
    if (!is_normalized(entry.name))
      v.fail(pkg.get("name"), "Name '" + entry.name + "' is not normalized", ctx + ".name");
    auto* ver = v.get(pkg, "version", T::string, ctx);
    std::optional<Version> pkg_version;
    if (ver) {
      pkg_version = parse_version(**ver->as_string());
      if (!pkg_version) v.fail(ver, "Invalid version: '" + **ver->as_string() + "'", ctx + ".version");
      entry.version = **ver->as_string();
    }
    if (auto* rp = v.get(pkg, "requires-python", T::string, ctx)) {
      v.specifiers(rp, ctx + ".requires-python");
      entry.requires_python = **rp->as_string();
    }
    v.array_of(pkg, "dependencies", T::table, ctx);
    if (auto* m = v.get(pkg, "marker", T::string, ctx)) {
      v.marker(m, ctx + ".marker");
      entry.marker = **m->as_string();
    }
    const toml::table* vcs = nullptr;
    if (auto* n = v.get(pkg, "vcs", T::table, ctx)) {
      vcs = n->as_table();
      const std::string c = ctx + ".vcs";
      v.str(*vcs, "type", c, true);
      std::string url = v.str(*vcs, "url", c), vpath = v.str(*vcs, "path", c);
      v.str(*vcs, "requested-revision", c);
      v.str(*vcs, "commit-id", c, true);
      v.str(*vcs, "subdirectory", c);
      if (url.empty() && vpath.empty()) v.fail(vcs, "path or url must be provided", c);
    }
    const toml::table* dir = nullptr;
    if (auto* n = v.get(pkg, "directory", T::table, ctx)) {
      dir = n->as_table();
      v.str(*dir, "path", ctx + ".directory", true);
      v.get(*dir, "editable", T::boolean, ctx + ".directory");
      v.str(*dir, "subdirectory", ctx + ".directory");
    }
    std::optional<Validator::FileSource> archive, sdist;
    if (auto* n = v.get(pkg, "archive", T::table, ctx)) {
      archive = v.file_source(*n->as_table(), ctx + ".archive", false);
      v.str(*n->as_table(), "subdirectory", ctx + ".archive");
    }
    v.str(pkg, "index", ctx);
    if (auto* n = v.get(pkg, "sdist", T::table, ctx)) sdist = v.file_source(*n->as_table(), ctx + ".sdist", true);
    std::vector<Validator::FileSource> wheels;
    std::vector<const toml::node*> wheel_nodes;
    if (auto* ws = v.array_of(pkg, "wheels", T::table, ctx))
      for (std::size_t i = 0; i < ws->size(); ++i) {
        wheels.push_back(v.file_source(*(*ws)[i].as_table(), ctx + ".wheels[" + std::to_string(i) + "]", true));
        wheel_nodes.push_back(&(*ws)[i]);
      }
    if (auto* ids = v.array_of(pkg, "attestation-identities", T::table, ctx))
      for (std::size_t i = 0; i < ids->size(); ++i)
        v.str(*(*ids)[i].as_table(), "kind", ctx + ".attestation-identities[" + std::to_string(i) + "]", true);
    v.get(pkg, "tool", T::table, ctx);

    const int distributions = (sdist ? 1 : 0) + static_cast<int>(wheels.size());
    const int direct = (vcs ? 1 : 0) + (dir ? 1 : 0) + (archive ? 1 : 0);
    if (distributions > 0 && direct > 0)
      v.fail(&pkg, "None of vcs, directory, archive must be set if sdist or wheels are set", ctx);
    if (distributions == 0 && direct != 1)
      v.fail(&pkg, "Exactly one of vcs, directory, archive must be set if sdist and wheels are not set", ctx);

    // Each wheel's file name against its package (packaging checks both).
    std::string wheel_version;
    auto check_wheel = [&](const Validator::FileSource& f, const toml::node* at, const std::string& c) {
      std::string fname = v.filename(f);
      auto wn = parse_wheel_name(fname);
      auto wv = wn ? parse_version(wn->version) : std::nullopt;
      if (!wn || !wv) v.fail(at, "Invalid wheel filename '" + fname + "'", c);
      if (normalize_name(wn->name) != entry.name)
        v.fail(at, "Name in '" + fname + "' is not consistent with package name '" + entry.name + "'", c);
      if (pkg_version && compare(*wv, *pkg_version) != 0)
        v.fail(at, "Version in '" + fname + "' is not consistent with package version '" + entry.version + "'", c);
      if (wheel_version.empty()) wheel_version = wn->version;
      else if (!pkg_version && compare(*parse_version(wheel_version), *wv) != 0 && entry.unusable.empty()) {
        entry.unusable_line = v.line(at);
        entry.unusable = entry.name + " has no version and its wheels name different ones (" + wheel_version + ", " +
                         wn->version + "); envbuild installs one pinned version";
        entry.unusable_reason = LockRefusal::not_pinned;
      }
    };
    for (std::size_t i = 0; i < wheels.size(); ++i)
      check_wheel(wheels[i], wheel_nodes[i], ctx + ".wheels[" + std::to_string(i) + "]");
    if (sdist) {
      std::string fname = v.filename(*sdist), sname, sversion;
      const toml::node* at = pkg.get("sdist");
      if (!parse_sdist_name(fname, sname, sversion))
        v.fail(at, "Invalid sdist filename '" + fname + "'", ctx + ".sdist");
      if (normalize_name(sname) != entry.name)
        v.fail(at, "Name in '" + fname + "' is not consistent with package name '" + entry.name + "'", ctx + ".sdist");
      if (pkg_version && compare(*parse_version(sversion), *pkg_version) != 0)
        v.fail(at, "Version in '" + fname + "' is not consistent with package version '" + entry.version + "'",
               ctx + ".sdist");
    }

    // What envbuild installs: the wheels, or an archive that is a wheel
    // (`uv export` writes archive = {url = ".../torch-...whl"} for a URL wheel).
    auto unusable = [&](int line, const std::string& why, LockRefusal reason = LockRefusal::unsupported) {
      if (!entry.unusable.empty()) return;
      entry.unusable_line = line;
      entry.unusable = why;
      entry.unusable_reason = reason;
    };
    std::vector<std::pair<Validator::FileSource, const toml::node*>> installable;
    for (std::size_t i = 0; i < wheels.size(); ++i) installable.emplace_back(wheels[i], wheel_nodes[i]);
    if (archive) {
      const toml::node* at = pkg.get("archive");
      std::string fname = v.filename(*archive);
      if (fname.size() > 4 && fname.compare(fname.size() - 4, 4, ".whl") == 0) {
        Validator::FileSource as_wheel = *archive;
        as_wheel.name = fname;
        check_wheel(as_wheel, at, ctx + ".archive");
        installable.emplace_back(as_wheel, at);
      } else {
        unusable(entry.line,
                 entry.name + " is the archive '" + fname + "', which is not a wheel; envbuild installs wheels only");
      }
    }
    if (dir)
      unusable(entry.line, entry.name + " is the local directory '" + v.str(*dir, "path", ctx) +
                               "', not a wheel; envbuild installs wheels only (uv: export with --no-emit-project, or "
                               "build the project into a wheel and lock that)");
    if (vcs) unusable(entry.line, entry.name + " has only a vcs source and no wheels; envbuild installs wheels only");
    if (installable.empty() && sdist)
      unusable(entry.line, entry.name + " has only an sdist and no wheels; envbuild installs wheels only");
    if (entry.version.empty()) entry.version = wheel_version;
    for (auto& [f, at] : installable) {
      LockedWheel lw;
      lw.filename = v.filename(f);
      lw.url = f.url;
      lw.path = f.path;
      lw.size = f.size;
      if (lw.path.empty() && !fetchable(lw.url)) {
        unusable(v.line(at), lw.filename + ": envbuild fetches http, https and file URLs, not '" +
                                 lw.url.substr(0, lw.url.find(':')).substr(0, 40) + ":'");
        continue;
      }
      if (f.sha256.empty()) {
        unusable(v.line(at), lw.filename + " has no sha256 hash (envbuild checks sha256)", LockRefusal::unhashed);
        continue;
      }
      if (!util::is_hex(f.sha256, 64)) {
        unusable(v.line(at), lw.filename + ": sha256 hash must be 64 hex digits, got '" + f.sha256.substr(0, 80) + "'",
                 LockRefusal::weak_hash);
        continue;
      }
      lw.sha256 = f.sha256;
      entry.sha256.push_back(lw.sha256);
      entry.wheels.push_back(std::move(lw));
    }
    lock.entries.push_back(std::move(entry));
  }
  return lock;
}

}  // namespace provkit::pyspec
