#include "provkit/pyenv/interpreter.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/json.hpp"
#include "provkit/util/paths.hpp"
#include "provkit/util/process.hpp"
#include "provkit/util/text.hpp"

namespace provkit::pyenv {

namespace {

// Printed as one JSON object. -I -S keeps user site and .pth files out.
const char* const kQueryScript = R"PY(
import json, os, platform, sys, sysconfig
scheme = "venv" if "venv" in sysconfig.get_scheme_names() else "posix_prefix"
base = "/@ENVROOT@"
v = {"base": base, "platbase": base, "installed_base": base, "installed_platbase": base}
paths = sysconfig.get_paths(scheme=scheme, vars=v)
rel = {k: os.path.relpath(p, base) for k, p in paths.items() if k in ("purelib", "platlib", "scripts", "include", "data")}
libc = platform.libc_ver()
impl = sys.implementation
iv = "%d.%d.%d" % impl.version[:3]
if impl.version.releaselevel != "final":
    iv += impl.version.releaselevel[0] + str(impl.version.serial)
print(json.dumps({
    "executable": os.path.realpath(sys.executable),
    "implementation": impl.name,
    "version": list(sys.version_info[:3]) + [sys.version_info.releaselevel, sys.version_info.serial],
    "abiflags": getattr(sys, "abiflags", ""),
    "machine": platform.machine(),
    "glibc": libc[1] if libc[0] == "glibc" else "",
    "is_64bit": sys.maxsize > 2**32,
    "venv_paths": rel,
    "markers": {
        "implementation_name": impl.name,
        "implementation_version": iv,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_python_implementation": platform.python_implementation(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    },
}))
)PY";

Interpreter from_json(const nlohmann::json& j) {
  Interpreter it;
  it.executable = j.at("executable").get<std::string>();
  it.implementation = j.at("implementation").get<std::string>();
  const auto& v = j.at("version");
  it.major = v.at(0).get<int>();
  it.minor = v.at(1).get<int>();
  it.micro = v.at(2).get<int>();
  it.releaselevel = v.at(3).get<std::string>();
  it.serial = v.at(4).get<int>();
  it.abiflags = j.at("abiflags").get<std::string>();
  it.machine = j.at("machine").get<std::string>();
  it.glibc = j.at("glibc").get<std::string>();
  it.is_64bit = j.at("is_64bit").get<bool>();
  it.venv_paths = j.at("venv_paths").get<std::map<std::string, std::string>>();
  it.markers = j.at("markers").get<std::map<std::string, std::string>>();
  return it;
}

using util::is_executable_file;

// A pyenv shim ("exec .../libexec/pyenv exec python3.12 ...") runs whichever
// version pyenv has active and answers "command not found" when that one
// lacks the command. Returns the pyenv root the shim belongs to, or nothing
// when `p` is not a shim.
std::optional<fs::path> pyenv_shim_root(const fs::path& p) {
  std::string head;
  if (FILE* f = std::fopen(p.c_str(), "rb")) {
    char buf[2048];
    head.assign(buf, std::fread(buf, 1, sizeof buf, f));
    std::fclose(f);
  }
  if (head.rfind("#!", 0) != 0 || head.find("pyenv\" exec ") == std::string::npos) return std::nullopt;
  static const std::regex root_re(R"re(export PYENV_ROOT="([^"]+)")re");
  std::smatch m;
  if (std::regex_search(head, m, root_re)) return fs::path(m[1].str());
  return p.parent_path().parent_path();  // <root>/shims/<command>
}

}  // namespace

std::string Interpreter::version() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(micro);
}
std::string Interpreter::xy() const { return std::to_string(major) + "." + std::to_string(minor); }
std::string Interpreter::version_info() const { return version() + "." + releaselevel + "." + std::to_string(serial); }

pyspec::TagInputs tag_inputs(const Interpreter& it) {
  pyspec::TagInputs in{it.implementation, it.major, it.minor, it.abiflags, it.machine, it.glibc, it.is_64bit, {}};
  if (auto p = it.markers.find("sys_platform"); p != it.markers.end()) in.sys_platform = p->second;
  return in;
}

Interpreter query_interpreter(const fs::path& python, const fs::path& cache_dir) {
  std::error_code ec;
  fs::path resolved = fs::canonical(python, ec);
  if (ec) throw Error(ExitCode::usage, python.string() + ": no such interpreter");
  struct stat st {};
  if (::stat(resolved.c_str(), &st) != 0) throw Error(ExitCode::usage, python.string() + ": cannot stat interpreter");
  std::string key = util::sha256_hex(resolved.string() + "\n" + std::to_string(st.st_mtim.tv_sec) + "." +
                                     std::to_string(st.st_mtim.tv_nsec) + "\n" + std::to_string(st.st_size) + "\nv1");
  // Below the cache through util::Root: a link planted in the shared cache is never followed, a FIFO never waited on.
  util::Root cache(cache_dir);
  const fs::path cached = cache_dir / "interpreters" / (key + ".json");  // spelt from the root, as Root wants
  constexpr std::size_t kAnswerMax = 1u << 20;                           // an answer is a few hundred bytes
  // A script (a pyenv shim) may start another interpreter tomorrow: never cached.
  bool is_script = false;
  if (FILE* f = std::fopen(resolved.c_str(), "rb")) {
    char head[2] = {0, 0};
    is_script = std::fread(head, 1, 2, f) == 2 && head[0] == '#' && head[1] == '!';
    std::fclose(f);
  }
  if (!is_script) {
    try {
      if (auto text = cache.read_if_present(cached, kAnswerMax); !text.empty())
        return from_json(util::parse_untrusted(text, cached.string()));
    } catch (const std::exception&) {
      // A damaged or unusable cache entry is asked again and rewritten.
    }
  }
  util::RunOptions run_options;
  run_options.stderr_to = util::StderrTo::inherit;
  auto ran = util::run({python.string(), "-I", "-S", "-c", kQueryScript}, run_options);
  const std::string& out = ran.output;
  int rc = util::shell_status(ran);
  if (rc != 0)
    throw Error(ExitCode::usage, python.string() + ": interpreter failed to answer (exit " + std::to_string(rc) + ")");
  Interpreter it;
  try {
    it = from_json(util::parse_untrusted(out, python.string()));
  } catch (const std::exception& e) {
    throw Error(ExitCode::usage, python.string() + ": unexpected answer from interpreter: " + e.what());
  }
  if (it.major != 3) throw Error(ExitCode::usage, python.string() + ": Python " + it.version() + " is not Python 3");
  try {
    if (!is_script) cache.write_atomic(cached, out);
  } catch (const Error&) {
    // An unwritable cache only costs the next run one more question.
  }
  return it;
}

fs::path find_python(const std::string& given, const fs::path& managed_dir, std::optional<std::string_view> path_list) {
  const std::string spec = given.empty() ? "python3" : given;
  if (spec.find('/') != std::string::npos) {
    if (!is_executable_file(spec)) throw Error(ExitCode::usage, spec + ": not an executable interpreter");
    return spec;
  }
  static const std::regex version_re(R"((\d+)\.(\d+)(\.\d+)?)");
  std::smatch m;
  std::vector<fs::path> candidates;
  std::string command = spec;
  bool is_version = std::regex_match(spec, m, version_re);
  if (is_version) {
    std::string xy = m[1].str() + "." + m[2].str();
    command = "python" + xy;
    // Managed installs: <managed>/cpython-3.12.3-.../python/bin/python3.12, newest first.
    std::vector<fs::path> managed;
    std::error_code ec;
    if (fs::is_directory(managed_dir, ec)) {
      for (auto& e : fs::directory_iterator(managed_dir, ec)) {
        auto name = e.path().filename().string();
        if (name.rfind("cpython-" + spec, 0) == 0 &&
            (name.size() == 8 + spec.size() || name[8 + spec.size()] == '.' || name[8 + spec.size()] == '-'))
          managed.push_back(e.path() / "python" / "bin" / command);
      }
    }
    std::sort(managed.rbegin(), managed.rend());
    candidates.insert(candidates.end(), managed.begin(), managed.end());
  }
  // pyenv roots: $PYENV_ROOT (or ~/.pyenv), and that of any shim on PATH.
  std::vector<fs::path> pyenv_roots;
  auto root = util::getenv_str("PYENV_ROOT");
  pyenv_roots.emplace_back(root.empty() ? util::getenv_str("HOME") + "/.pyenv" : root);
  const std::string path_env = path_list ? std::string(*path_list) : util::getenv_str("PATH");
  for (const auto& dir : util::split_path_list(path_env)) {
    fs::path candidate = fs::path(dir) / command;
    // A version is found in pyenv's versions directly, not through a shim
    // that works only while pyenv has that version active.
    if (is_version && is_executable_file(candidate))
      if (auto shim_root = pyenv_shim_root(candidate)) {
        if (std::find(pyenv_roots.begin(), pyenv_roots.end(), *shim_root) == pyenv_roots.end())
          pyenv_roots.push_back(*shim_root);
        continue;
      }
    candidates.push_back(candidate);
  }
  if (is_version) {
    for (auto& pyenv_root : pyenv_roots) {
      std::vector<fs::path> pyenv;
      std::error_code ec;
      for (auto& e : fs::directory_iterator(pyenv_root / "versions", ec)) {
        auto name = e.path().filename().string();
        if (name == spec || name.rfind(spec + ".", 0) == 0) pyenv.push_back(e.path() / "bin" / command);
      }
      std::sort(pyenv.rbegin(), pyenv.rend());
      candidates.insert(candidates.end(), pyenv.begin(), pyenv.end());
    }
    candidates.push_back(fs::path("/usr/local/bin") / command);
    candidates.push_back(fs::path("/usr/bin") / command);
  }
  for (auto& c : candidates)
    if (is_executable_file(c)) return c;
  throw Error(ExitCode::usage, "no interpreter found for '" + util::printable(spec) +
                                   "' (looked in managed installs, PATH, pyenv versions, /usr/local/bin, /usr/bin)");
}

}  // namespace provkit::pyenv
