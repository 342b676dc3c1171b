#include "provkit/pyfind/discovery.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "provkit/util/fs.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/paths.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::pyfind {

namespace {

// A version request: "3.12" or "3.12.5" (major.minor[.micro], digits only).
struct VersionSpec {
  std::string text;  // as given
  std::string xy;    // "3.12"
};

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::optional<VersionSpec> parse_version(const std::string& spec) {
  auto parts = util::split(spec, '.');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  for (const auto& p : parts)
    if (!all_digits(p)) return std::nullopt;
  return VersionSpec{spec, parts[0] + "." + parts[1]};
}

// The numbers of a version at the start of `s` ("3.11.10-linux..." -> 3, 11, 10), for newest-first order:
// "3.11.10" sorts above "3.11.9", which the names alone would not.
std::vector<unsigned long> version_numbers(std::string_view s) {
  std::vector<unsigned long> out;
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    unsigned long n = 0;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i)
      n = n * 10 + static_cast<unsigned long>(s[i] - '0');
    out.push_back(n);
    if (i < s.size() && s[i] == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
    else break;
  }
  return out;
}

// Entries of `dir` whose name `version_of(name)` accepts (returning the version text it starts with),
// newest version first (then by name, descending, so the order never depends on the directory's).
template <class VersionOf>
std::vector<fs::path> newest_first(const fs::path& dir, VersionOf version_of) {
  std::vector<std::pair<std::vector<unsigned long>, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (auto version = version_of(name)) found.emplace_back(version_numbers(*version), it->path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second.filename() > b.second.filename();
  });
  std::vector<fs::path> out;
  out.reserve(found.size());
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

// `name` is `prefix` + the requested version, then the end or `.`/`-` (so 3.1 is not 3.12): the rest.
std::optional<std::string_view> after_version(std::string_view name, std::string_view prefix, const VersionSpec& v) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  if (!name.starts_with(v.text)) return std::nullopt;
  auto rest = name.substr(v.text.size());
  if (!rest.empty() && rest.front() != '.' && rest.front() != '-') return std::nullopt;
  return rest;
}

std::string machine() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.machine) : std::string();
}

// A pyenv shim ("exec .../libexec/pyenv exec python3.12 ...") runs whichever version pyenv has active and
// answers "command not found" when that one lacks the command. The pyenv root it belongs to, or nothing
// when `p` is not a shim.
std::optional<fs::path> pyenv_shim_root(const fs::path& p) {
  std::string head;
  try {
    head = util::read_file_head(p, 2048);  // read_file's rules: a FIFO named like an interpreter never blocks
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!head.starts_with("#!") || head.find("pyenv\" exec ") == std::string::npos) return std::nullopt;
  const std::string_view marker = "export PYENV_ROOT=\"";
  if (auto at = head.find(marker); at != std::string::npos) {
    auto start = at + marker.size();
    if (auto end = head.find('"', start); end != std::string::npos && end > start)
      return fs::path(head.substr(start, end - start));
  }
  return p.parent_path().parent_path();  // <root>/shims/<command>
}

fs::path data_home(const Environment& env) {
  // XDG: a relative value is to be ignored.
  if (env.xdg_data_home.is_absolute()) return env.xdg_data_home;
  return env.home.empty() ? fs::path() : env.home / ".local" / "share";
}

struct Search {
  std::vector<Candidate> candidates;
  std::vector<std::string> places;  // what the not-found sentence names, in order

  void add(fs::path p, Source s) {
    for (const auto& c : candidates)
      if (c.executable == p) return;
    candidates.push_back({std::move(p), s});
  }
};

void search_version(const VersionSpec& v, const Environment& env, Search& s) {
  const std::string command = "python" + v.xy;
  // envbuild's installs: <dir>/cpython-3.12.3-x86_64-<sha8>/python/bin/python3.12.
  const fs::path managed = managed_dir(env);
  for (auto& d : newest_first(managed, [&](std::string_view name) -> std::optional<std::string_view> {
         if (!after_version(name, "cpython-", v)) return std::nullopt;
         return name.substr(8);
       }))
    s.add(d / "python" / "bin" / command, Source::managed);
  s.places.push_back("envbuild's installs " + managed.string());

  // uv's installs: <dir>/cpython-3.12.5-linux-x86_64-gnu/bin/python3.12 (install/bin/ in uv before 0.3), the
  // layout of uv's managed.rs; only this machine's glibc builds, and no +freethreaded or +debug variant.
  const fs::path uv = uv_install_dir(env);
  const std::string platform = "-linux-" + machine() + "-gnu";
  for (auto& d : newest_first(uv, [&](std::string_view name) -> std::optional<std::string_view> {
         auto rest = after_version(name, "cpython-", v);
         if (!rest || !rest->ends_with(platform)) return std::nullopt;
         auto version = name.substr(8, name.size() - 8 - platform.size());
         if (version.find('+') != std::string_view::npos) return std::nullopt;
         return version;
       })) {
    std::error_code ec;
    s.add((fs::is_directory(d / "install", ec) ? d / "install" : d) / "bin" / command, Source::uv_managed);
  }
  s.places.push_back("uv's installs " + uv.string());

  // uv's links to its installs (uv python install puts pythonX.Y in ~/.local/bin): with them, so that a
  // service without ~/.local/bin on PATH finds what the login shell finds, even from another install dir.
  const fs::path links = uv_bin_dir(env);
  if (!links.empty()) {
    s.add(links / command, Source::uv_link);
    s.places.push_back("uv's links " + links.string());
  }

  // PATH, in order; a pyenv shim is not taken but names a pyenv root to look in.
  std::vector<fs::path> pyenv_roots;
  if (!env.pyenv_root.empty()) pyenv_roots.push_back(env.pyenv_root);
  else if (!env.home.empty()) pyenv_roots.push_back(env.home / ".pyenv");
  for (const auto& dir : util::split_path_list(env.path)) {
    fs::path candidate = fs::path(dir) / command;
    if (util::is_executable_file(candidate))
      if (auto shim_root = pyenv_shim_root(candidate)) {
        if (std::find(pyenv_roots.begin(), pyenv_roots.end(), *shim_root) == pyenv_roots.end())
          pyenv_roots.push_back(*shim_root);
        continue;
      }
    s.add(std::move(candidate), Source::path);
  }
  s.places.emplace_back("PATH");

  for (const auto& root : pyenv_roots) {
    for (auto& d : newest_first(root / "versions", [&](std::string_view name) -> std::optional<std::string_view> {
           if (name != v.text && !name.starts_with(v.text + ".")) return std::nullopt;
           return name;
         }))
      s.add(d / "bin" / command, Source::pyenv);
    s.places.push_back("pyenv's versions " + (root / "versions").string());
  }

  // conda: the active environment, then the usual base installs and their environments.
  std::vector<fs::path> conda;
  if (!env.conda_prefix.empty()) conda.push_back(env.conda_prefix);
  if (!env.home.empty())
    for (const char* base : {"miniforge3", "miniconda3", "anaconda3"}) {
      conda.push_back(env.home / base);
      std::vector<fs::path> envs;
      std::error_code ec;
      for (fs::directory_iterator it(env.home / base / "envs", ec), end; !ec && it != end; it.increment(ec))
        envs.push_back(it->path());
      std::sort(envs.begin(), envs.end());
      conda.insert(conda.end(), envs.begin(), envs.end());
    }
  std::string conda_places;
  for (const auto& prefix : conda) {
    s.add(prefix / "bin" / command, Source::conda);
    if (prefix.parent_path().filename() != "envs") conda_places += (conda_places.empty() ? "" : ", ") + prefix.string();
  }
  if (!conda_places.empty()) s.places.push_back("conda " + conda_places);

  for (const char* dir : {"/usr/local/bin", "/usr/bin"}) {
    s.add(fs::path(dir) / command, Source::system);
    s.places.emplace_back(dir);
  }
}

Search search(const std::string& given, const Environment& env) {
  const std::string spec = given.empty() ? "python3" : given;
  Search s;
  if (spec.find('/') != std::string::npos) {
    s.add(spec, Source::given_path);
    return s;
  }
  if (auto v = parse_version(spec)) {
    search_version(*v, env, s);
    return s;
  }
  for (const auto& dir : util::split_path_list(env.path)) s.add(fs::path(dir) / spec, Source::path);
  s.places.emplace_back("PATH");
  return s;
}

}  // namespace

Environment Environment::read(const std::function<std::string(const char*)>& lookup) {
  Environment e;
  e.path = lookup("PATH");
  e.home = lookup("HOME");
  e.xdg_data_home = lookup("XDG_DATA_HOME");
  e.xdg_bin_home = lookup("XDG_BIN_HOME");
  e.managed_dir = lookup("ENVBUILD_PYTHON_DIR");
  e.uv_python_install_dir = lookup("UV_PYTHON_INSTALL_DIR");
  e.uv_python_bin_dir = lookup("UV_PYTHON_BIN_DIR");
  e.pyenv_root = lookup("PYENV_ROOT");
  e.conda_prefix = lookup("CONDA_PREFIX");
  return e;
}

const std::vector<std::string_view>& environment_variables() {
  static const std::vector<std::string_view> names{"PATH",
                                                   "HOME",
                                                   "XDG_DATA_HOME",
                                                   "XDG_BIN_HOME",
                                                   "ENVBUILD_PYTHON_DIR",
                                                   "UV_PYTHON_INSTALL_DIR",
                                                   "UV_PYTHON_BIN_DIR",
                                                   "PYENV_ROOT",
                                                   "CONDA_PREFIX"};
  return names;
}

fs::path managed_dir(const Environment& env) {
  if (!env.managed_dir.empty()) return env.managed_dir;
  return data_home(env) / "provkit" / "pythons";
}

fs::path uv_install_dir(const Environment& env) {
  if (!env.uv_python_install_dir.empty()) return env.uv_python_install_dir;
  return data_home(env) / "uv" / "python";
}

fs::path uv_bin_dir(const Environment& env) {
  if (!env.uv_python_bin_dir.empty()) return env.uv_python_bin_dir;
  if (env.xdg_bin_home.is_absolute()) return env.xdg_bin_home;
  return env.home.empty() ? fs::path() : env.home / ".local" / "bin";
}

std::string_view source_name(Source s) {
  switch (s) {
    case Source::given_path: return "given path";
    case Source::managed: return "envbuild's installs";
    case Source::uv_managed: return "uv's installs";
    case Source::path: return "PATH";
    case Source::uv_link: return "uv's links";
    case Source::pyenv: return "pyenv";
    case Source::conda: return "conda";
    case Source::system: return "system";
  }
  return "?";
}

std::vector<Candidate> candidates(const std::string& spec, const Environment& env) {
  return search(spec, env).candidates;
}

std::string_view reason_name(DiscoveryRefusal) { return reason_name(Reason::usage); }
ExitCode exit_code(DiscoveryRefusal) { return ExitCode::usage; }

Candidate find_python(const std::string& given, const Environment& env) {
  const std::string spec = given.empty() ? "python3" : given;
  Search s = search(spec, env);
  for (auto& c : s.candidates)
    if (util::is_executable_file(c.executable)) {
      util::log::debug("pyfind", [&] {
        return spec + ": " + c.executable.string() + " (" + std::string(source_name(c.source)) + ")";
      });
      return c;
    }
  if (s.places.empty()) throw Error(DiscoveryRefusal::not_executable, spec + ": not an executable interpreter");
  std::string looked;
  for (const auto& place : s.places) looked += (looked.empty() ? "" : "; ") + place;
  throw Error(DiscoveryRefusal::not_found, "no interpreter found for " + spec + " (looked in: " + looked + ")");
}

}  // namespace provkit::pyfind
