#include "provkit/pyenv/interpreter.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/json.hpp"
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

}  // namespace provkit::pyenv
