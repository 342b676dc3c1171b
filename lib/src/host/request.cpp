// What envcheck is asked to check: the Request, its setters (shared by the
// command line and profiles) and where things are on this host.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "provkit/host/envcheck.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/strings.hpp"
#include "system.hpp"

namespace provkit::host {

bool Request::asks_anything() const {
  return cuda || !needs.empty() || min_cc || !arch_list.empty() || vram_free || cc || nvcc || python || !libs.empty() ||
         !elfs.empty() || !kernels.empty() || !disks.empty() || !ports.empty() || !files.empty() || rocm ||
         !gfx.empty() || min_pcie || min_h2d || pcie_atomics || roce || wants_nccl_test() || engine;
}

std::string field_key(Field field) {
  switch (field) {
    case Field::cuda: return "cuda";
    case Field::need: return "need";
    case Field::min_cc: return "min_cc";
    case Field::python: return "python";
    case Field::vram_free: return "vram_free";
    case Field::disk: return "disk";
    case Field::file: return "files";
    case Field::link_test: return "link_test";
    case Field::min_pcie: return "min_pcie";
    case Field::min_h2d: return "min_h2d";
    case Field::wait: return "wait";
    case Field::gfx: return "gfx";
    case Field::severity: return "severity";
    case Field::nccl_lib: return "nccl_lib";
    case Field::hidden_size: return "hidden_size";
    case Field::layers: return "layers";
    case Field::min_busbw: return "min_busbw";
    case Field::max_allreduce_us: return "max_allreduce_us";
    case Field::nccl_timeout: return "nccl_timeout";
  }
  return "?";
}

InvalidValue::InvalidValue(Field field_, std::string value_, std::string wanted_)
    : Error(ExitCode::usage, "'" + field_key(field_) + "' wants " + wanted_ + ", not '" + value_ + "'"),
      field(field_),
      value(std::move(value_)),
      wanted(std::move(wanted_)) {}

std::string InvalidValue::sentence(const std::string& subject) const {
  return subject + " wants " + wanted + ", not '" + value + "'";
}

void set_cuda(Request& r, const std::string& text) {
  auto v = gpucode::parse_version(text);
  if (!v) throw InvalidValue(Field::cuda, text, "a CUDA release as X.Y (like 13.0)");
  r.cuda = v;
}

void add_need(Request& r, const std::string& text) {
  if (!gpucode::capability_minimum(text)) throw InvalidValue(Field::need, text, "fp8 or nvfp4");
  if (std::find(r.needs.begin(), r.needs.end(), text) == r.needs.end()) r.needs.push_back(text);
}

void set_min_cc(Request& r, const std::string& text) {
  auto v = gpucode::parse_version(text);
  if (!v) throw InvalidValue(Field::min_cc, text, "a compute capability as X.Y (like 8.9)");
  r.min_cc = v;
}

void set_arch_list(Request& r, const std::string& text) { r.arch_list = gpucode::parse_arch_list(text); }

namespace {
// util::parse_size, a bad value said as the field's (the flag or the profile key that gave it).
std::uint64_t size_of(Field field, const std::string& text) {
  try {
    return util::parse_size(text);
  } catch (const Error&) {
    throw InvalidValue(field, text, "a size (like 24G, 24GiB, 80GB or 1.5T)");
  }
}
}  // namespace

void set_vram_free(Request& r, const std::string& text) {
  r.vram_free = size_of(Field::vram_free, text);
  r.vram_free_text = text;
}

void set_python(Request& r, const std::string& version) {
  // A path (it has a '/') is taken as the interpreter itself, as envbuild's --python takes it.
  if (!version.empty() && version.find('/') == std::string::npos && !gpucode::parse_version(version))
    throw InvalidValue(Field::python, version, "a version as X.Y (like 3.11) or an interpreter's path");
  r.python = version;
}

namespace {
std::optional<double> positive_number(const std::string& text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !(v > 0)) return std::nullopt;
  return v;
}
}  // namespace

void set_link_test(Request& r, const std::string& seconds) {
  if (seconds.empty()) return void(r.link_test = 1.0);
  auto v = positive_number(seconds);
  if (!v || *v > 60)
    throw InvalidValue(Field::link_test, seconds, "seconds per GPU, more than 0 and at most 60 (like 1 or 0.5)");
  r.link_test = v;
}

void set_wait(Request& r, const std::string& seconds) {
  auto v = positive_number(seconds);
  if (!v || *v > 3600) throw InvalidValue(Field::wait, seconds, "seconds, more than 0 and at most 3600 (like 30)");
  r.wait = v;
}

void set_nccl(Request& r, Field field, const std::string& text) {
  r.nccl_test = true;
  const auto v = positive_number(text);
  auto whole = [&](int most, const char* wanted) {
    if (!v || *v > most || *v != std::floor(*v)) throw InvalidValue(field, text, wanted);
    return static_cast<int>(*v);
  };
  switch (field) {
    case Field::nccl_lib:
      if (text.empty()) throw InvalidValue(field, text, "the path of a libnccl.so.2");
      r.nccl_lib = text;
      return;
    case Field::hidden_size: r.hidden_size = whole(1 << 20, "a model's hidden size (like 5120)"); return;
    case Field::layers: r.layers = whole(100000, "a model's layer count (like 64)"); return;
    case Field::min_busbw:
      if (!v) throw InvalidValue(field, text, "a bus bandwidth in GB/s (like 100)");
      r.min_busbw = v;
      r.min_busbw_text = text;
      return;
    case Field::max_allreduce_us:
      if (!v) throw InvalidValue(field, text, "a latency in microseconds (like 50)");
      r.max_allreduce_us = v;
      r.max_allreduce_us_text = text;
      return;
    case Field::nccl_timeout:
      if (!v || *v > 3600) throw InvalidValue(field, text, "seconds, more than 0 and at most 3600 (like 120)");
      r.nccl_timeout = *v;
      return;
    default: throw std::logic_error("set_nccl: not an NCCL field");
  }
}

void add_gfx(Request& r, const std::string& targets) {
  // One target, or the set a build carries ("gfx1151,gfx1201"): each GPU must load one of them.
  for (const auto& target : util::split(targets, ','))
    if (target.rfind("gfx", 0) != 0 || target.size() < 6)
      throw InvalidValue(Field::gfx, targets,
                         "a gfx target (like gfx942 or gfx11-generic), or the targets of one build (gfx1151,gfx1201)");
  r.gfx.push_back(targets);
}

void set_engine_args(Request& r, const std::string& line) {
  r.engine = fit::parse_engine_args(line);
  r.engine_args = line;
}

void set_min_pcie(Request& r, const std::string& text) {
  auto colon = text.find(':');
  int g = 0, w = 0;
  auto read = [](std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  static const int widths[] = {1, 2, 4, 8, 12, 16, 32};
  if (colon == std::string::npos || !read(std::string_view(text).substr(0, colon), g) ||
      !read(std::string_view(text).substr(colon + 1), w) || g < 1 || g > 6 ||
      std::find(std::begin(widths), std::end(widths), w) == std::end(widths))
    throw InvalidValue(Field::min_pcie, text, "GEN:WIDTH, a PCIe generation 1-6 and a width x1-x32 (like 4:16)");
  r.min_pcie = host::LinkReading{g, w};
  r.min_pcie_text = text;
}

void set_min_h2d(Request& r, const std::string& text) {
  auto v = positive_number(text);
  if (!v) throw InvalidValue(Field::min_h2d, text, "a bandwidth in GB/s (like 20)");
  r.min_h2d = v;
  r.min_h2d_text = text;
}

void add_disk(Request& r, const std::string& path, const std::string& size) {
  if (path.empty()) throw InvalidValue(Field::disk, path, "a path");
  r.disks.push_back({path, size_of(Field::disk, size), size});
}

void add_port(Request& r, const std::string& text) {
  // PORT, HOST:PORT, or [IPV6]:PORT; HOST an address literal or "localhost".
  PortGate gate;
  std::string port_text = text;
  auto colon = text.rfind(':');
  if (colon != std::string::npos) {
    gate.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (gate.host.size() >= 2 && gate.host.front() == '[' && gate.host.back() == ']')
      gate.host = gate.host.substr(1, gate.host.size() - 2);
    if (gate.host == "localhost") gate.host = "127.0.0.1";
    if (!host::is_address_literal(gate.host))
      throw Error(ExitCode::usage,
                  "'" + text + "' names no address to bind: HOST must be an IPv4 or IPv6 address (or localhost)");
  }
  int port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() || port < 1 || port > 65535)
    throw Error(ExitCode::usage, "'" + text + "' is not a TCP port (1-65535)");
  gate.port = port;
  r.ports.push_back(gate);
}

void add_file(Request& r, const std::string& path, const std::string& sha256) {
  if (path.empty()) throw InvalidValue(Field::file, path, "a path");
  const std::string lower = util::lower(sha256);
  if (!lower.empty() && !util::is_hex(lower, 64))
    throw Error(ExitCode::usage, "the sha256 for " + path + " must be 64 hex digits, not '" + sha256 + "'");
  r.files.push_back({path, lower});
}

void add_disk_assignment(Request& r, const std::string& text) {
  auto [path, size] = host::split_assignment(text);
  if (text.find('=') == std::string::npos || path.empty() || size.empty())
    throw InvalidValue(Field::disk, text, "PATH=SIZE (like /models=200G)");
  add_disk(r, path, size);
}

void set_severity(Request& r, const std::string& check, const std::string& level) {
  std::string name = check;
  std::replace(name.begin(), name.end(), '_', '-');
  const bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
  });
  if (!word)
    throw InvalidValue(Field::severity, check + "=" + level, "CHECK=warn|fail with CHECK a check's name (min-pcie)");
  if (level != "warn" && level != "fail")
    throw InvalidValue(Field::severity, check + "=" + level, "CHECK=warn or CHECK=fail");
  r.warn_only.erase(std::remove(r.warn_only.begin(), r.warn_only.end(), name), r.warn_only.end());
  if (level == "warn") r.warn_only.push_back(name);
}

void add_severity_assignment(Request& r, const std::string& text) {
  auto at = text.find('=');
  if (at == std::string::npos)
    throw InvalidValue(Field::severity, text, "CHECK=warn or CHECK=fail (like min-pcie=warn)");
  set_severity(r, text.substr(0, at), text.substr(at + 1));
}

void add_file_assignment(Request& r, const std::string& text) {
  // Split at the last '=': what follows it must be the sha256.
  if (text.find('=') == std::string::npos) return add_file(r, text, "");
  auto [path, digest] = host::split_assignment(text);
  if (path.empty()) throw InvalidValue(Field::file, text, "PATH or PATH=SHA256");
  add_file(r, path, digest);
}

Environment Environment::from_process() {
  Environment e;
  e.driver = gpu::ProbeOptions::from_environment();
  if (auto v = util::env_value(util::EnvVar::envcheck_sysfs_root); !v.empty()) e.sysfs_root = v;
  if (auto v = util::env_value(util::EnvVar::envcheck_cuda_root); !v.empty()) e.cuda_root = v;
  e.path_env = util::env_value(util::EnvVar::path);
  e.cc_env = util::env_value(util::EnvVar::cc);
  e.cuda_home = util::env_value(util::EnvVar::cuda_home);
  e.rocm_path = util::env_value(util::EnvVar::rocm_path);
  e.ld_library_path = util::env_value(util::EnvVar::ld_library_path);
  if (auto v = util::env_get(util::EnvVar::cuda_visible_devices)) e.cuda_visible_devices = *v;
  if (auto v = util::env_get(util::EnvVar::rocr_visible_devices)) e.rocr_visible_devices = *v;
  if (auto v = util::env_get(util::EnvVar::hip_visible_devices)) e.hip_visible_devices = *v;
  if (auto v = util::env_get(util::EnvVar::hsa_xnack)) e.hsa_xnack = *v;
  if (auto v = util::env_value(util::EnvVar::tmpdir); !v.empty()) e.tmpdir = v;
  e.self_program = "/proc/self/exe";
  e.python_search = pyfind::Environment::read(util::env_value_named);
  return e;
}

}  // namespace provkit::host
