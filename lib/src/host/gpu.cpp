#include "provkit/host/gpu.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "step_clock.hpp"

#include "pcie.hpp"
#include "provkit/error.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/paths.hpp"
#include "provkit/util/process.hpp"
#include "provkit/util/strings.hpp"
#include "shared_library.hpp"

namespace provkit::host::gpu {

namespace {

// The few NVML types envcheck uses, declared from NVML's documented ABI
// (nvml.h is not needed to build): every call returns nvmlReturn_t, 0 = success.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {  // nvmlDeviceGetPciInfo_v3's
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
// nvmlProcessInfo_t as nvmlDeviceGet{Compute,Graphics}RunningProcesses_v2 and _v3 fill it.
struct nvmlProcessInfo_t {
  unsigned pid;
  unsigned long long usedGpuMemory;  // NVML_VALUE_NOT_AVAILABLE when not known
  unsigned gpuInstanceId, computeInstanceId;
};
constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
constexpr unsigned kNoInstance = 0xFFFFFFFF;              // an id outside MIG
constexpr int kInsufficientSize = 7;                      // NVML_ERROR_INSUFFICIENT_SIZE
using RunningProcesses = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*);

// One of NVML's running-process lists, merged into `into` by pid (a process that both computes and
// draws is in both lists). The list can grow between the sizing call and the read: ask again then.
void read_processes(RunningProcesses list, nvmlDevice_t h, bool graphics, std::vector<GpuProcess>& into) {
  if (!list) return;
  std::vector<nvmlProcessInfo_t> infos;
  unsigned n = 0;
  nvmlReturn_t rc = kInsufficientSize;
  for (int attempt = 0; attempt < 4 && rc == kInsufficientSize; ++attempt) {
    infos.assign(n + 8, nvmlProcessInfo_t{});
    n = static_cast<unsigned>(infos.size());
    rc = list(h, &n, infos.data());
  }
  if (rc != 0) return;
  for (unsigned i = 0; i < n && i < infos.size(); ++i) {
    const auto& info = infos[i];
    auto seat = std::find_if(into.begin(), into.end(),
                             [&](const GpuProcess& p) { return p.pid == static_cast<int>(info.pid); });
    if (seat == into.end()) seat = into.insert(into.end(), GpuProcess{.pid = static_cast<int>(info.pid)});
    if (info.usedGpuMemory != kValueNotAvailable && !seat->memory) seat->memory = info.usedGpuMemory;
    if (info.gpuInstanceId != kNoInstance) seat->gpu_instance = static_cast<int>(info.gpuInstanceId);
    if (info.computeInstanceId != kNoInstance) seat->compute_instance = static_cast<int>(info.computeInstanceId);
    (graphics ? seat->graphics : seat->compute) = true;
  }
}

constexpr int kP2PCapsRead = 0;         // NVML_P2P_CAPS_INDEX_READ
constexpr int kP2PCapsNvlink = 2;       // NVML_P2P_CAPS_INDEX_NVLINK
constexpr unsigned kStringBuffer = 96;  // >= NVML_DEVICE_UUID_V2_BUFFER_SIZE, NAME_V2, DRIVER_VERSION (80)

std::string p2p_words(int status) {
  switch (status) {  // nvmlGpuP2PStatus_t
    case 0: return "OK";
    case 1: return "chipset not supported";
    case 2: return "GPU not supported";
    case 3: return "IOH topology not supported";
    case 4: return "disabled by regkey";
    case 5: return "not supported";
    default: return "unknown";
  }
}

using Library = host::SharedLibrary;

bool probe_nvml(const ProbeOptions& options, Snapshot& s) {
  detail::StepClock clock("nvml");
  Library lib(options.nvml_library, Library::Binding::lazy);  // a dozen entry points of hundreds
  clock.lap("dlopen");
  if (!lib.loaded()) {
    s.nvml_error = lib.error();
    return false;
  }
  auto init = lib.symbol<nvmlReturn_t (*)()>("nvmlInit_v2");
  auto shutdown = lib.symbol<nvmlReturn_t (*)()>("nvmlShutdown");
  auto driver_version = lib.symbol<nvmlReturn_t (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
  auto cuda_version = lib.symbol<nvmlReturn_t (*)(int*)>("nvmlSystemGetCudaDriverVersion_v2");
  auto count = lib.symbol<nvmlReturn_t (*)(unsigned*)>("nvmlDeviceGetCount_v2");
  auto by_index = lib.symbol<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
  if (!init || !shutdown || !driver_version || !cuda_version || !count || !by_index) {
    s.nvml_error = options.nvml_library + " lacks the NVML entry points envcheck needs (nvmlInit_v2, ...)";
    return false;
  }
  if (int rc = init(); rc != 0) {
    s.nvml_error = "nvmlInit_v2 failed with NVML error " + std::to_string(rc) +
                   " (is the kernel module loaded and the user allowed to open /dev/nvidia*?)";
    return false;
  }
  clock.lap("nvmlInit_v2");
  s.source = Source::nvml;
  char buf[kStringBuffer] = {};
  if (driver_version(buf, sizeof buf) == 0) s.driver_version = buf;
  int cuda = 0;
  if (cuda_version(&cuda) == 0) s.driver_cuda = cuda;

  using DevString = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned);
  using DevUInt = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
  auto get_uuid = lib.symbol<DevString>("nvmlDeviceGetUUID");
  auto get_name = lib.symbol<DevString>("nvmlDeviceGetName");
  auto get_cc = lib.symbol<nvmlReturn_t (*)(nvmlDevice_t, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
  auto get_memory = lib.symbol<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo");
  auto gen_now = lib.symbol<DevUInt>("nvmlDeviceGetCurrPcieLinkGeneration");
  auto width_now = lib.symbol<DevUInt>("nvmlDeviceGetCurrPcieLinkWidth");
  // The most the GPU and its slot allow together, as nvidia-smi's pcie.link.*.max.
  auto gen_max = lib.symbol<DevUInt>("nvmlDeviceGetMaxPcieLinkGeneration");
  auto width_max = lib.symbol<DevUInt>("nvmlDeviceGetMaxPcieLinkWidth");
  auto pci_info = lib.symbol<nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3");
  auto p2p = lib.symbol<nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int, int*)>("nvmlDeviceGetP2PStatus");
  // MIG (NVML 11+; absent from older drivers, which then list no instance).
  auto mig_mode = lib.symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode");
  auto mig_count = lib.symbol<DevUInt>("nvmlDeviceGetMaxMigDeviceCount");
  auto mig_by_index = lib.symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned, nvmlDevice_t*)>(
      "nvmlDeviceGetMigDeviceHandleByIndex");
  auto mig_parent = lib.symbol<nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t*)>(
      "nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
  auto gi_id = lib.symbol<DevUInt>("nvmlDeviceGetGpuInstanceId");
  auto ci_id = lib.symbol<DevUInt>("nvmlDeviceGetComputeInstanceId");
  // Who holds memory: the _v3 lists (drivers 510+), else _v2 (same record) on older drivers.
  auto running = [&](const char* v3, const char* v2) {
    auto f = lib.symbol<RunningProcesses>(v3);
    return f ? f : lib.symbol<RunningProcesses>(v2);
  };
  auto compute_processes = running("nvmlDeviceGetComputeRunningProcesses_v3",
                                   "nvmlDeviceGetComputeRunningProcesses_v2");
  auto graphics_processes = running("nvmlDeviceGetGraphicsRunningProcesses_v3",
                                    "nvmlDeviceGetGraphicsRunningProcesses_v2");

  unsigned n = 0;
  std::vector<nvmlDevice_t> handles;
  if (count(&n) == 0) {
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice_t h = nullptr;
      if (by_index(i, &h) != 0) continue;
      handles.push_back(h);
      Device d;
      d.index = static_cast<int>(i);
      char text[kStringBuffer] = {};
      if (get_uuid && get_uuid(h, text, sizeof text) == 0) d.uuid = text;
      std::fill(std::begin(text), std::end(text), '\0');
      if (get_name && get_name(h, text, sizeof text) == 0) d.name = text;
      int major = -1, minor = -1;
      if (get_cc && get_cc(h, &major, &minor) == 0) d.cc_major = major, d.cc_minor = minor;
      nvmlPciInfo_t pci{};
      if (pci_info && pci_info(h, &pci) == 0)
        d.pci_bus_id = host::canonical_bus_id(std::string(pci.busId, strnlen(pci.busId, sizeof pci.busId)));
      nvmlMemory_t mem{};
      if (get_memory && get_memory(h, &mem) == 0) d.memory_total = mem.total, d.memory_free = mem.free;
      auto read_uint = [&](DevUInt f, int& out) {
        unsigned v = 0;
        if (f && f(h, &v) == 0) out = static_cast<int>(v);
      };
      read_uint(gen_now, d.pcie.gen_current);
      read_uint(width_now, d.pcie.width_current);
      read_uint(gen_max, d.pcie.gen_max);
      read_uint(width_max, d.pcie.width_max);
      unsigned current = 0, pending = 0;
      if (mig_mode && mig_mode(h, &current, &pending) == 0) d.mig_mode = static_cast<int>(current);
      unsigned slots = 0;
      if (d.mig_mode == 1 && mig_count && mig_by_index && mig_count(h, &slots) == 0) {
        for (unsigned k = 0; k < slots; ++k) {
          nvmlDevice_t m = nullptr;
          if (mig_by_index(h, k, &m) != 0 || !m) continue;  // an empty slot
          // The instance belongs to this GPU: NVML says so from the instance's side too.
          nvmlDevice_t parent = nullptr;
          if (mig_parent && (mig_parent(m, &parent) != 0 || parent != h)) continue;
          MigInstance mi;
          std::fill(std::begin(text), std::end(text), '\0');
          if (get_uuid && get_uuid(m, text, sizeof text) == 0) mi.uuid = text;
          std::fill(std::begin(text), std::end(text), '\0');
          if (get_name && get_name(m, text, sizeof text) == 0) mi.name = text;
          unsigned id = 0;
          if (gi_id && gi_id(m, &id) == 0) mi.gpu_instance = static_cast<int>(id);
          if (ci_id && ci_id(m, &id) == 0) mi.compute_instance = static_cast<int>(id);
          nvmlMemory_t mm{};
          if (get_memory && get_memory(m, &mm) == 0) mi.memory_total = mm.total, mi.memory_free = mm.free;
          if (!mi.uuid.empty()) d.migs.push_back(mi);
        }
      }
      read_processes(compute_processes, h, false, d.processes);
      read_processes(graphics_processes, h, true, d.processes);
      s.devices.push_back(d);
    }
  }
  if (options.want_peers && p2p) {
    for (std::size_t a = 0; a < handles.size(); ++a)
      for (std::size_t b = a + 1; b < handles.size(); ++b) {
        PeerLink link{s.devices[a].index, s.devices[b].index, "unknown", "unknown"};
        int st = 0;
        if (p2p(handles[a], handles[b], kP2PCapsRead, &st) == 0) link.read = p2p_words(st);
        if (p2p(handles[a], handles[b], kP2PCapsNvlink, &st) == 0) link.nvlink = p2p_words(st);
        s.peers.push_back(link);
      }
  }
  clock.lap("queries");
  shutdown();
  clock.lap("nvmlShutdown");
  return true;
}

void probe_nvidia_smi(const ProbeOptions& options, Snapshot& s) {
  auto smi = util::find_executable(options.nvidia_smi, util::env_value(util::EnvVar::path));
  if (!smi) {
    s.smi_error = options.nvidia_smi +
                  (options.nvidia_smi.find('/') == std::string::npos ? " is not on PATH" : " does not exist");
    return;
  }
  util::RunOptions run_options;
  run_options.timeout = std::chrono::seconds(20);
  auto query = util::run({smi->string(), std::string("--query-gpu=") + kSmiQueryFields,
                          "--format=csv,noheader,nounits"},
                         run_options);
  if (query.exit_status != 0) {
    auto first_line = query.output.substr(0, query.output.find('\n'));
    s.smi_error = smi->string() + " failed: " + (query.start_error.empty() ? first_line : query.start_error);
    return;
  }
  SmiQuery parsed;
  try {
    parsed = parse_smi_query(query.output);
  } catch (const Error& e) {
    s.smi_error = std::string("cannot read nvidia-smi's answer: ") + e.what();
    return;
  }
  s.source = Source::nvidia_smi;
  s.devices = parsed.devices;
  s.driver_version = parsed.driver_version;
  auto banner = util::run({smi->string()}, run_options);
  s.driver_cuda = parse_smi_cuda_version(banner.output);
  auto apps = util::run({smi->string(), std::string("--query-compute-apps=") + kSmiAppsFields,
                         "--format=csv,noheader,nounits"},
                        run_options);
  try {
    if (apps.exit_status == 0) parse_smi_apps(apps.output, s.devices);
  } catch (const Error&) {
    // The seat map is a courtesy of the fallback: an answer it cannot read leaves the devices as they are.
  }
}

using util::trim;

std::optional<long long> to_number(const std::string& s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// One line of nvidia-smi's csv: its fields, trimmed.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f;
  std::size_t start = 0;
  for (;;) {
    auto comma = line.find(',', start);
    f.push_back(
        trim(std::string_view(line).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return f;
}

// Each non-empty line of nvidia-smi's csv answer, numbered from 1, with its fields.
template <typename Each>
void for_each_csv_line(std::string_view csv, Each each) {
  int line_no = 0;
  while (!csv.empty()) {
    auto nl = csv.find('\n');
    auto line = trim(csv.substr(0, nl));
    csv.remove_prefix(nl == std::string_view::npos ? csv.size() : nl + 1);
    ++line_no;
    if (!line.empty()) each(line_no, line, csv_fields(line));
  }
}

}  // namespace

std::string no_driver_reason(const Snapshot& s) {
  std::string why = "no NVIDIA driver found: " + s.nvml_error;
  if (!s.smi_error.empty()) why += "; " + s.smi_error;
  return why;
}

ProbeOptions ProbeOptions::from_environment() {
  ProbeOptions o;
  if (auto v = util::env_value(util::EnvVar::envcheck_nvml_lib); !v.empty()) o.nvml_library = v;
  if (auto v = util::env_value(util::EnvVar::envcheck_cuda_lib); !v.empty()) o.cuda_library = v;
  if (auto v = util::env_value(util::EnvVar::envcheck_nvidia_smi); !v.empty()) o.nvidia_smi = v;
  return o;
}

void probe_libcuda(const ProbeOptions& options, Snapshot& s) {
  detail::StepClock clock("libcuda");
  Library lib(options.cuda_library, Library::Binding::lazy);  // one entry point: cuDriverGetVersion
  clock.lap("dlopen");
  if (!lib.loaded()) {
    s.libcuda_error = lib.error();
    return;
  }
  s.libcuda_path = lib.path();
  // cuDriverGetVersion needs no cuInit (which would cost a driver start-up).
  auto get_version = lib.symbol<int (*)(int*)>("cuDriverGetVersion");
  int v = 0;
  if (!get_version) s.libcuda_error = options.cuda_library + " has no cuDriverGetVersion";
  else if (int rc = get_version(&v); rc != 0)
    s.libcuda_error = "cuDriverGetVersion failed with CUDA error " + std::to_string(rc);
  else s.libcuda_cuda = v;
  clock.lap("cuDriverGetVersion");
}

Snapshot probe(const ProbeOptions& options) {
  // libcuda (30+ MB to map and relocate) and NVML (its init opens the devices)
  // know nothing of each other: side by side, the probe costs the slower of them.
  Snapshot s, cuda;
  std::thread libcuda([&] { probe_libcuda(options, cuda); });
  try {
    if (!probe_nvml(options, s)) probe_nvidia_smi(options, s);
  } catch (...) {
    libcuda.join();
    throw;
  }
  libcuda.join();
  std::vector<GpuProcess*> processes;
  for (auto& d : s.devices)
    for (auto& p : d.processes) processes.push_back(&p);
  describe_processes(options.proc_root, processes);
  s.libcuda_path = std::move(cuda.libcuda_path);
  s.libcuda_error = std::move(cuda.libcuda_error);
  s.libcuda_cuda = cuda.libcuda_cuda;
  return s;
}

const char* const kSmiQueryFields =
    "index,uuid,name,compute_cap,memory.total,memory.free,pcie.link.gen.current,pcie.link.gen.max,"
    "pcie.link.width.current,pcie.link.width.max,driver_version";

SmiQuery parse_smi_query(std::string_view csv) {
  SmiQuery q;
  for_each_csv_line(csv, [&](int line_no, const std::string& line, const std::vector<std::string>& f) {
    if (f.size() != 11)
      throw Error(ExitCode::check_failed, "nvidia-smi line " + std::to_string(line_no) + ": expected 11 fields, got " +
                                              std::to_string(f.size()) + ": " + line);
    Device d;
    auto index = to_number(f[0]);
    if (!index)
      throw Error(ExitCode::check_failed, "nvidia-smi line " + std::to_string(line_no) + ": bad index '" + f[0] + "'");
    d.index = static_cast<int>(*index);
    d.uuid = f[1];
    d.name = f[2];
    if (auto dot = f[3].find('.'); dot != std::string::npos) {
      auto ma = to_number(f[3].substr(0, dot)), mi = to_number(f[3].substr(dot + 1));
      if (ma && mi) d.cc_major = static_cast<int>(*ma), d.cc_minor = static_cast<int>(*mi);
    }
    const std::uint64_t mib = std::uint64_t{1024} * 1024;  // nounits: memory in MiB
    if (auto v = to_number(f[4])) d.memory_total = static_cast<std::uint64_t>(*v) * mib;
    if (auto v = to_number(f[5])) d.memory_free = static_cast<std::uint64_t>(*v) * mib;
    int* links[] = {&d.pcie.gen_current, &d.pcie.gen_max, &d.pcie.width_current, &d.pcie.width_max};
    for (int k = 0; k < 4; ++k)
      if (auto v = to_number(f[6 + k])) *links[k] = static_cast<int>(*v);  // "[N/A]" stays unknown
    q.driver_version = f[10];
    q.devices.push_back(d);
  });
  return q;
}

const char* const kSmiAppsFields = "gpu_uuid,pid,used_memory";

void parse_smi_apps(std::string_view csv, std::vector<Device>& devices) {
  for_each_csv_line(csv, [&](int line_no, const std::string& line, const std::vector<std::string>& f) {
    auto pid = f.size() == 3 ? to_number(f[1]) : std::nullopt;
    if (!pid || *pid <= 0)
      throw Error(ExitCode::check_failed, "nvidia-smi --query-compute-apps line " + std::to_string(line_no) +
                                              ": expected GPU uuid, pid, used memory: " + line);
    auto device = std::find_if(devices.begin(), devices.end(), [&](const Device& d) { return d.uuid == f[0]; });
    if (device == devices.end()) return;
    GpuProcess p{.pid = static_cast<int>(*pid), .compute = true};
    if (auto mib = to_number(f[2]); mib && *mib >= 0)  // "[N/A]" where the driver does not say
      p.memory = static_cast<std::uint64_t>(*mib) * 1024 * 1024;
    device->processes.push_back(p);
  });
}

int parse_smi_cuda_version(std::string_view banner) {
  auto at = banner.find("CUDA Version:");
  if (at == std::string_view::npos) return 0;
  auto rest = trim(banner.substr(at + 13, 12));
  auto dot = rest.find('.');
  if (dot == std::string::npos) return 0;
  auto major = to_number(rest.substr(0, dot));
  std::string minor_digits;
  for (std::size_t i = dot + 1; i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])); ++i)
    minor_digits += rest[i];
  auto minor = to_number(minor_digits);
  if (!major || !minor) return 0;
  return static_cast<int>(*major * 1000 + *minor * 10);
}

std::vector<CompatLibrary> find_compat_libraries(const fs::path& cuda_root) {
  std::vector<CompatLibrary> out;
  std::error_code ec;
  for (fs::directory_iterator it(cuda_root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->path().filename().string().starts_with("cuda")) continue;
    std::error_code ec2;
    for (fs::directory_iterator c(it->path() / "compat", ec2); !ec2 && c != end; c.increment(ec2)) {
      auto name = c->path().filename().string();
      static const std::string prefix = "libcuda.so.";
      if (!name.starts_with(prefix)) continue;
      auto version = name.substr(prefix.size());
      if (version.find('.') == std::string::npos) continue;  // libcuda.so.1 is the symlink; the file names the driver
      // /usr/local/cuda and /usr/local/cuda-13 are usually links to one
      // versioned tree: name each library once, by its real path.
      std::error_code ec3;
      auto real = fs::weakly_canonical(c->path(), ec3);
      auto path = ec3 ? c->path() : real;
      if (std::none_of(out.begin(), out.end(), [&](const CompatLibrary& l) { return l.path == path; }))
        out.push_back({path, version});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

bool is_compat_path(const fs::path& path) { return path.parent_path().filename() == "compat"; }

const Device* select_device(const std::vector<Device>& devices, const std::string& selector) {
  if (auto index = to_number(selector)) {
    for (const auto& d : devices)
      if (d.index == *index) return &d;
    return nullptr;
  }
  const Device* found = nullptr;
  for (const auto& d : devices) {
    if (d.uuid == selector) return &d;
    if (selector.size() >= 8 && d.uuid.starts_with(selector)) {
      if (found) return nullptr;  // ambiguous prefix
      found = &d;
    }
  }
  return found;
}

bool Visibility::visible(int index) const {
  return !restricted || std::find(indices.begin(), indices.end(), index) != indices.end();
}

std::vector<const VisibleMig*> Visibility::migs_of(int index) const {
  std::vector<const VisibleMig*> out;
  for (const auto& m : migs)
    if (m.index == index) out.push_back(&m);
  return out;
}

namespace {

// The instance a MIG entry names: "MIG-<uuid>" (or a unique prefix of it), or
// the older "MIG-GPU-<gpu uuid>/<gi>/<ci>" (the parent by its UUID, then the
// instance by its GPU and compute instance ids).
std::optional<VisibleMig> find_mig(const std::vector<Device>& devices, const std::string& entry) {
  if (entry.rfind("MIG-GPU-", 0) == 0) {
    auto rest = entry.substr(4);
    auto slash = rest.find('/');
    if (slash == std::string::npos) return std::nullopt;
    auto ids = rest.substr(slash + 1);
    auto slash2 = ids.find('/');
    if (slash2 == std::string::npos) return std::nullopt;
    auto gi = to_number(ids.substr(0, slash2)), ci = to_number(ids.substr(slash2 + 1));
    const Device* parent = select_device(devices, rest.substr(0, slash));
    if (!gi || !ci || !parent) return std::nullopt;
    for (const auto& m : parent->migs)
      if (m.gpu_instance == *gi && m.compute_instance == *ci) return VisibleMig{parent->index, entry, m};
    return std::nullopt;
  }
  std::optional<VisibleMig> found;
  for (const auto& d : devices)
    for (const auto& m : d.migs) {
      if (m.uuid == entry) return VisibleMig{d.index, entry, m};
      if (entry.size() >= 12 && m.uuid.starts_with(entry)) {
        if (found) return std::nullopt;  // ambiguous prefix
        found = VisibleMig{d.index, entry, m};
      }
    }
  return found;
}

}  // namespace

std::vector<Device> engine_devices(const std::vector<Device>& devices, const Visibility& v) {
  if (!v.restricted) return devices;
  std::vector<Device> out;
  for (int i : v.indices) {
    const auto* d = select_device(devices, std::to_string(i));
    if (!d) continue;
    out.push_back(*d);
    const MigInstance* least = nullptr;
    for (const auto* m : v.migs_of(i))
      if (!least || m->instance.memory_free.value_or(0) < least->memory_free.value_or(0)) least = &m->instance;
    if (least) {
      if (!least->name.empty()) out.back().name = least->name;
      out.back().memory_total = least->memory_total;
      out.back().memory_free = least->memory_free;
    }
  }
  return out;
}

Visibility cuda_visibility(const std::vector<Device>& devices, const std::optional<std::string>& value) {
  Visibility v;
  if (!value) return v;
  v.restricted = true;
  v.text = *value;
  std::vector<std::string> entries;
  std::string cur;
  for (char c : *value + ",") {
    if (c == ',') entries.push_back(cur), cur.clear();
    else if (c != ' ' && c != '\t') cur += c;
  }
  if (value->find_first_not_of(" \t") == std::string::npos) return v;  // "" hides every GPU
  auto add = [&](int index) {
    if (std::find(v.indices.begin(), v.indices.end(), index) == v.indices.end()) v.indices.push_back(index);
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].rfind("MIG-", 0) == 0) {
      if (auto m = find_mig(devices, entries[i])) {
        add(m->index);
        v.migs.push_back(*m);
      } else {
        v.unknown_migs.push_back(entries[i]);  // names no instance: it gives the engine nothing, hides nothing
      }
      continue;
    }
    const Device* d = select_device(devices, entries[i]);
    if (!d) {
      v.ignored.assign(entries.begin() + static_cast<std::ptrdiff_t>(i), entries.end());
      while (!v.ignored.empty() && v.ignored.back().empty()) v.ignored.pop_back();
      break;
    }
    add(d->index);
  }
  return v;
}

void describe_processes(const fs::path& proc_root, const std::vector<GpuProcess*>& processes) {
  if (processes.empty()) return;
  const auto sockets = listening_sockets(proc_root);
  for (auto* p : processes) p->facts = describe_process(p->pid, sockets, proc_root);
}

}  // namespace provkit::host::gpu
