#pragma once
// What the NVIDIA driver says about the box: read through NVML
// (libnvidia-ml.so.1) and cuDriverGetVersion (libcuda.so.1), both opened with
// dlopen at run time, so nothing of the driver is needed to build or to run
// on a host without a GPU. Where NVML cannot be opened, nvidia-smi's output
// is parsed instead.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/host/processes.hpp"

namespace provkit::host::gpu {

namespace fs = std::filesystem;

struct PcieLink {
  int gen_current = -1, gen_max = -1;  // -1: unknown
  int width_current = -1, width_max = -1;
};

// A MIG instance: a slice of a GPU in MIG mode, which an engine sees as a
// device of its own (its memory, its name), with the parent's architecture.
struct MigInstance {
  std::string uuid;                                        // "MIG-4c5b3f0e-..."
  std::string name;                                        // "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
  int gpu_instance = -1, compute_instance = -1;            // the GI and CI ids; -1 unknown
  std::optional<std::uint64_t> memory_total, memory_free;  // bytes
};

// A process holding memory on a GPU: NVML's running compute and graphics
// processes (nvidia-smi's --query-compute-apps in the fallback), and who it is.
struct GpuProcess {
  int pid = 0;
  std::optional<std::uint64_t> memory;  // bytes; nullopt where the driver does not say (NVML_VALUE_NOT_AVAILABLE)
  bool compute = false, graphics = false;
  int gpu_instance = -1, compute_instance = -1;  // its MIG instance; -1 none or unknown
  ProcessFacts facts;                            // command, systemd unit, ports (read from proc_root)
};

// Who each process is (command, unit, ports), read from proc_root: the listening sockets once for all of
// them. NVML's processes and KFD's alike.
void describe_processes(const fs::path& proc_root, const std::vector<GpuProcess*>& processes);

struct Device {
  int index = 0;
  std::string uuid;  // "GPU-8f0c..."
  std::string name;
  std::string pci_bus_id;                                  // "0000:01:00.0" (sysfs's spelling); "" when not read
  int cc_major = -1, cc_minor = -1;                        // compute capability; -1 unknown
  std::optional<std::uint64_t> memory_total, memory_free;  // bytes
  PcieLink pcie;
  int mig_mode = -1;                  // NVML's current MIG mode: 1 enabled, 0 disabled, -1 not read
  std::vector<MigInstance> migs;      // its MIG instances (NVML's nvmlDeviceGetMigDeviceHandleByIndex)
  std::vector<GpuProcess> processes;  // what holds its memory, by pid
};

// Peer-to-peer between two GPUs, as nvmlDeviceGetP2PStatus reports it.
struct PeerLink {
  int a = 0, b = 0;
  std::string read;    // "OK", "not supported", "chipset not supported", ...
  std::string nvlink;  // same words, for the NVLink capability
};

enum class Source { none, nvml, nvidia_smi };

struct Snapshot {
  Source source = Source::none;
  std::string driver_version;  // "580.159.04"; empty when no driver was found
  int driver_cuda = 0;         // the kernel driver's CUDA version (NVML / nvidia-smi), 1000*major+10*minor
  std::vector<Device> devices;
  std::vector<PeerLink> peers;
  std::string nvml_error;  // why NVML could not be used
  std::string smi_error;   // why the nvidia-smi fallback gave nothing

  // libcuda.so.1, what the CUDA runtime of an engine loads.
  int libcuda_cuda = 0;      // cuDriverGetVersion; 0 when libcuda could not be used
  std::string libcuda_path;  // the file the loader picked
  std::string libcuda_error;
};

// Where to find the driver: the real defaults, or stand-ins named by the
// environment (ENVCHECK_NVML_LIB, ENVCHECK_CUDA_LIB, ENVCHECK_NVIDIA_SMI).
struct ProbeOptions {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string cuda_library = "libcuda.so.1";
  std::string nvidia_smi = "nvidia-smi";  // looked up on PATH
  fs::path proc_root = "/proc";           // where the GPU processes' commands, cgroups and sockets are read
  bool want_peers = true;
  static ProbeOptions from_environment();
};

// Reads everything the driver will say. Never throws for a missing driver:
// an empty driver_version with the *_error fields filled says that.
Snapshot probe(const ProbeOptions& options);

// Why a snapshot has no driver: "no NVIDIA driver found: " and what NVML and nvidia-smi said.
std::string no_driver_reason(const Snapshot& s);

// Only libcuda's cuDriverGetVersion (for --cuda when that is all that is asked).
void probe_libcuda(const ProbeOptions& options, Snapshot& into);

// Pure parsers for the nvidia-smi fallback.
// `nvidia-smi --query-gpu=index,uuid,name,compute_cap,memory.total,memory.free,
//  pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,
//  pcie.link.width.max,driver_version --format=csv,noheader,nounits`
extern const char* const kSmiQueryFields;
struct SmiQuery {
  std::vector<Device> devices;
  std::string driver_version;
};
// Throws provkit::Error(check_failed) naming the line when a line does not
// have the expected fields.
SmiQuery parse_smi_query(std::string_view csv);
// `nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits`:
// each line's process, given to the device of that uuid ("[N/A]" memory: unknown). Throws like
// parse_smi_query; a uuid no device has is skipped.
extern const char* const kSmiAppsFields;
void parse_smi_apps(std::string_view csv, std::vector<Device>& devices);
// The "CUDA Version: 13.0" in nvidia-smi's banner -> 13000; 0 when absent.
int parse_smi_cuda_version(std::string_view banner);

// Forward-compatibility libcuda (the cuda-compat package): every
// <cuda_root>/cuda*/compat/libcuda.so.<driver> found.
struct CompatLibrary {
  fs::path path;
  std::string driver_version;  // from the file name, "590.44.01"
};
std::vector<CompatLibrary> find_compat_libraries(const fs::path& cuda_root = "/usr/local");
// Whether a path is inside a cuda-compat directory (".../compat/libcuda.so...").
bool is_compat_path(const fs::path& path);

// Find a device by "0" (index) or "GPU-..." (UUID, or a unique prefix of it).
const Device* select_device(const std::vector<Device>& devices, const std::string& selector);

// The GPUs an engine sees under CUDA_VISIBLE_DEVICES, read as the CUDA runtime
// reads it: comma-separated indices or GPU UUIDs (unique prefixes allowed),
// the list ending at the first entry that names no GPU; "" hides every GPU.
// A MIG id ("MIG-<uuid>", or the older "MIG-GPU-<gpu uuid>/<gi>/<ci>") names an
// instance: its parent GPU is visible, through that instance. A MIG id that no
// instance has is set aside (unknown_migs) and the list goes on. Indices are
// the driver's (NVML's PCI order: CUDA_DEVICE_ORDER=PCI_BUS_ID).
struct VisibleMig {
  int index = 0;         // the parent GPU (driver index)
  std::string entry;     // as written in the variable
  MigInstance instance;  // the instance it names
};
struct Visibility {
  bool restricted = false;                // the variable is set
  std::string text;                       // its value
  std::vector<int> indices;               // the visible GPUs (driver indices), in the engine's order
  std::vector<std::string> ignored;       // the entries from the first unusable one on
  std::vector<VisibleMig> migs;           // the MIG entries that name an instance, in order
  std::vector<std::string> unknown_migs;  // the MIG entries that name none
  bool visible(int index) const;
  // The instances of GPU `index` the engine is given (empty: the whole GPU, or none).
  std::vector<const VisibleMig*> migs_of(int index) const;
};
Visibility cuda_visibility(const std::vector<Device>& devices, const std::optional<std::string>& value);
// The devices the engine is given, in its order: every one when the variable is unset. Through a MIG
// instance the engine's device is that instance: its name, its memory (the smallest free of them when it
// is given several), the parent's architecture.
std::vector<Device> engine_devices(const std::vector<Device>& devices, const Visibility& visibility);

}  // namespace provkit::host::gpu
