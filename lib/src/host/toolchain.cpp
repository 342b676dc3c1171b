#include "toolchain.hpp"

#include "provkit/error.hpp"

#include <cctype>

#include "provkit/util/fs.hpp"

namespace provkit::host::toolchain {

std::optional<Compiler> find_c_compiler(std::string_view cc_env, std::string_view path_list) {
  if (!cc_env.empty()) return Compiler{std::string(cc_env), find_executable(std::string(cc_env), path_list), "CC"};
  for (const char* name : {"gcc", "clang"})
    if (auto p = find_executable(name, path_list)) return Compiler{name, p, name};
  return std::nullopt;
}

BuildProof prove_compiler(const Compiler& cc, const fs::path& workdir) {
  BuildProof proof;
  fs::create_directories(workdir);
  auto source = workdir / "envcheck_probe.c";
  proof.object = workdir / "envcheck_probe.so";
  util::write_file_atomic(source, "int envcheck_probe(int x) { return x * 2 + 1; }\n");
  std::error_code ec;
  fs::remove(proof.object, ec);
  auto r = run({cc.path ? cc.path->string() : cc.command, source.string(), "-O3", "-shared", "-fPIC", "-o",
                proof.object.string()},
               std::chrono::seconds(60));
  proof.output = r.start_error.empty() ? r.output : "cannot run " + cc.command + ": " + r.start_error;
  if (r.timed_out) proof.output = "the compiler did not finish within 60 s";
  proof.ok = r.exit_status == 0 && fs::is_regular_file(proof.object, ec);
  return proof;
}

std::optional<Nvcc> find_nvcc(std::string_view cuda_home, std::string_view path_list, const fs::path& default_root) {
  if (!cuda_home.empty())
    if (auto p = find_executable((fs::path(cuda_home) / "bin" / "nvcc").string(), "")) return Nvcc{*p, "CUDA_HOME"};
  if (auto p = find_executable("nvcc", path_list)) return Nvcc{*p, "PATH"};
  if (auto p = find_executable((default_root / "bin" / "nvcc").string(), "")) return Nvcc{*p, default_root.string()};
  return std::nullopt;
}

std::optional<std::string> parse_nvcc_release(std::string_view out) {
  auto at = out.find("release ");
  if (at == std::string_view::npos) return std::nullopt;
  at += 8;
  auto end = at;
  while (end < out.size() && (std::isdigit(static_cast<unsigned char>(out[end])) || out[end] == '.')) ++end;
  if (end == at) return std::nullopt;
  return std::string(out.substr(at, end - at));
}

std::optional<Python> probe_python(const std::string& want, const pyfind::Environment& search, std::string& why) {
  // envbuild's rule, so both tools pick the same interpreter for "3.11".
  std::optional<fs::path> path;
  try {
    path = pyfind::find_python(want, search).executable;
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
  // -E -s -S: ignore PYTHON* variables, user site and site: the facts of the interpreter itself.
  auto r =
      run({path->string(), "-E", "-s", "-S", "-c",
           "import sys, sysconfig; print('%d.%d.%d' % sys.version_info[:3]); print(sysconfig.get_paths()['include'])"},
          std::chrono::seconds(20));
  auto nl = r.output.find('\n');
  if (r.exit_status != 0 || nl == std::string::npos) {
    why = path->string() + " did not answer: " + (r.start_error.empty() ? r.output.substr(0, 200) : r.start_error);
    return std::nullopt;
  }
  Python py;
  py.path = *path;
  py.version = r.output.substr(0, nl);
  auto rest = r.output.substr(nl + 1);
  py.include_dir = rest.substr(0, rest.find('\n'));
  std::error_code ec;
  py.has_headers = fs::is_regular_file(py.include_dir / "Python.h", ec);
  return py;
}

PythonLook look_for_python(std::string_view path_list) {
  PythonLook look;
  look.interpreter = find_executable("python3", path_list);
  std::vector<fs::path> include_roots;
  if (look.interpreter) {
    std::error_code ec;
    auto real = fs::canonical(*look.interpreter, ec);
    if (!ec) include_roots.push_back(real.parent_path().parent_path() / "include");
  }
  include_roots.emplace_back("/usr/local/include");
  include_roots.emplace_back("/usr/include");
  for (const auto& root : include_roots) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      auto name = it->path().filename().string();
      if (name.starts_with("python3") && fs::is_regular_file(it->path() / "Python.h", ec)) {
        look.header = it->path() / "Python.h";
        return look;
      }
    }
  }
  return look;
}

}  // namespace provkit::host::toolchain
