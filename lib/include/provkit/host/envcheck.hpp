#pragma once
// envcheck's checks: a Request (from the command line or a profile) in,
// check::Results out. The inventory is the same machinery with no request.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/fit/engine.hpp"
#include "provkit/host/check.hpp"
#include "provkit/host/cuda_compat.hpp"
#include "provkit/host/gpu.hpp"
#include "provkit/host/link_test.hpp"
#include "provkit/pyfind/discovery.hpp"

namespace provkit::host {

namespace fs = std::filesystem;

struct DiskGate {
  std::string path;
  std::uint64_t bytes = 0;
  std::string size_text;  // as written, for messages
};
struct PortGate {
  std::string host = "0.0.0.0";  // the address to bind: an IPv4 or IPv6 literal
  int port = 0;
  bool operator==(const PortGate&) const = default;
};
struct FileGate {
  std::string path;
  std::string sha256;  // lower-case hex; empty: existence only
};

struct Request {
  std::optional<gpucode::Version> cuda;
  bool strict = false;
  std::vector<std::string> gpus;   // selectors: index or UUID; empty = all
  std::vector<std::string> needs;  // "fp8", "nvfp4"
  std::optional<gpucode::Version> min_cc;
  std::vector<gpucode::ArchTarget> arch_list;
  std::optional<std::uint64_t> vram_free;
  std::string vram_free_text;
  bool cc = false;
  bool nvcc = false;
  std::optional<std::string> python;  // "" = any python3, else "X.Y"
  std::vector<std::string> libs;
  std::vector<std::string> elfs;
  std::vector<std::string> kernels;  // --kernels: files or directories whose GPU kernels are listed and judged
  bool allow_no_gpu_code = false;    // --kernels over objects none of which carries GPU code passes (else FAIL)
  std::vector<DiskGate> disks;
  std::vector<PortGate> ports;  // --port-free PORT or HOST:PORT
  std::vector<FileGate> files;
  bool rocm = false;
  std::vector<std::string> gfx;  // --gfx TARGET: every AMD GPU must load code built for it
  // The links (host/link_test, host/pcie, host/roce). --link-test alone adds
  // its measurements to the inventory; the rest are checks.
  std::optional<double> link_test;  // seconds per GPU
  std::optional<host::LinkReading> min_pcie;
  std::string min_pcie_text;      // "4:16", as written
  std::optional<double> min_h2d;  // GB/s
  std::string min_h2d_text;
  bool pcie_atomics = false;
  std::optional<std::string> roce;  // a device name, "" every one
  // --wait SECONDS: the gates a restart frees (--port-free, --vram-free) are asked again until each holds or
  // the time ends (a service stopped, its successor started: the port and the memory come free a moment later).
  std::optional<double> wait;
  // Checks whose FAIL is reported as WARN (severity: warn), by the first word of their CHECK column
  // ("min-pcie", "pcie-atomics", "disk"): an advisory check still runs and is shown, and does not fail the run.
  std::vector<std::string> warn_only;
  // The engine's NCCL (host/nccl): an all-reduce in bf16 over the selected GPUs, from one token's hidden state
  // up to a prefill, through the libnccl.so.2 the engine loads (--nccl-lib, then --python PATH's environment,
  // then the system's).
  bool nccl_test = false;
  std::string nccl_lib;
  int hidden_size = 5120;           // bytes of one token's state: hidden_size x 2 (bf16)
  std::optional<int> layers;        // the per-token floor: 2 x layers x the one-token latency
  std::optional<double> min_busbw;  // GB/s at the largest size
  std::string min_busbw_text;
  std::optional<double> max_allreduce_us;  // at the one-token size
  std::string max_allreduce_us_text;
  double nccl_timeout = 120;  // seconds the child may run before it is killed
  bool wants_nccl_test() const { return nccl_test || !nccl_lib.empty() || min_busbw || max_allreduce_us; }
  // --engine-args LINE: the engine's own command line, planned (provkit::fit) on this box's GPUs from the
  // model files it names on disk.
  std::optional<fit::EngineSettings> engine;
  std::string engine_args;  // as written

  bool asks_anything() const;  // false: print the inventory
  bool wants_link_test() const { return link_test || min_pcie || min_h2d; }
  double link_test_seconds() const { return link_test.value_or(1.0); }  // false: print the inventory
};

// The part of a Request a value was meant for. The library names it by its
// profile key; the tool says its flag (--min-cc), a profile FILE:LINE 'min_cc'.
enum class Field {
  cuda,
  need,
  min_cc,
  python,
  vram_free,
  disk,
  file,
  link_test,
  min_pcie,
  min_h2d,
  wait,
  gfx,
  severity,
  nccl_lib,
  hidden_size,
  layers,
  min_busbw,
  max_allreduce_us,
  nccl_timeout
};
std::string field_key(Field field);  // "cuda", "need", "min_cc", "python", "disk", "files", "link_test", ...

// A value a Request field cannot take, as data: what was given and what the
// field wants. what() is sentence("'KEY'").
class InvalidValue : public Error {
 public:
  InvalidValue(Field field, std::string value, std::string wanted);
  // "SUBJECT wants WANTED, not 'VALUE'": the one wording, with the subject
  // the caller knows the value by ("--cuda", "'cuda'").
  std::string sentence(const std::string& subject) const;
  Field field;
  std::string value;   // as given
  std::string wanted;  // "a CUDA release as X.Y (like 13.0)"
};

// Setters shared by the command line and profiles: they check the text and
// throw InvalidValue, or provkit::Error(usage) with one sentence naming the
// value (a size, a port, a sha256, an architecture), when it is wrong.
void set_cuda(Request& r, const std::string& text);
void add_need(Request& r, const std::string& text);
void set_min_cc(Request& r, const std::string& text);
void set_arch_list(Request& r, const std::string& text);
void set_vram_free(Request& r, const std::string& text);
void set_python(Request& r, const std::string& version);     // "" or "X.Y"
void set_link_test(Request& r, const std::string& seconds);  // "" = the default
void set_min_pcie(Request& r, const std::string& text);      // "GEN:WIDTH"
void set_min_h2d(Request& r, const std::string& text);       // GB/s
void set_wait(Request& r, const std::string& seconds);       // at most an hour
// The NCCL test's values (Field::nccl_lib ... Field::nccl_timeout); each one asks for the test.
void set_nccl(Request& r, Field field, const std::string& text);
void add_gfx(Request& r, const std::string& targets);  // gfx942, gfx11-generic, or one build's "gfx1151,gfx1201"
// The engine's command line (fit::parse_engine_args): throws what it throws (usage, engine_refuses).
void set_engine_args(Request& r, const std::string& line);
// A check's severity: "warn" (its FAIL becomes WARN) or "fail" (the default). `check` is the first word of
// its CHECK column; a profile's underscores (min_pcie) are taken as the column's dashes.
void set_severity(Request& r, const std::string& check, const std::string& level);
void add_severity_assignment(Request& r, const std::string& text);  // "CHECK=warn"
void add_disk(Request& r, const std::string& path, const std::string& size);
void add_port(Request& r, const std::string& text);
void add_file(Request& r, const std::string& path, const std::string& sha256);
// "PATH=SIZE" and "PATH[=sha256]" forms of the command line.
void add_disk_assignment(Request& r, const std::string& text);
void add_file_assignment(Request& r, const std::string& text);

// Reads a profile (YAML, schema in docs/envcheck.md) into `into`.
// Throws provkit::Error(usage) "FILE:LINE: what" for anything wrong in it
// (also a key given twice, or a second YAML document).
void load_profile(const fs::path& file, Request& into);
// The same for profile text already read; `file` names it in messages.
void parse_profile(std::string_view text, const std::string& file, Request& into);

// Where things are on this host; tests point these at stand-ins.
struct Environment {
  gpu::ProbeOptions driver;
  fs::path sysfs_root = "/sys";                     // ENVCHECK_SYSFS_ROOT
  fs::path cuda_root = "/usr/local";                // ENVCHECK_CUDA_ROOT: holds cuda/ (nvcc) and cuda*/compat/
  std::string path_env;                             // PATH
  std::string cc_env;                               // CC
  std::string cuda_home;                            // CUDA_HOME
  std::string rocm_path;                            // ROCM_PATH
  std::string ld_library_path;                      // LD_LIBRARY_PATH
  std::optional<std::string> cuda_visible_devices;  // CUDA_VISIBLE_DEVICES; nullopt when unset
  std::optional<std::string> rocr_visible_devices, hip_visible_devices;  // ROCR_/HIP_VISIBLE_DEVICES
  std::optional<std::string> hsa_xnack;                                  // HSA_XNACK: the engine's XNACK request
  fs::path tmpdir = "/tmp";                                              // TMPDIR: scratch files (NCCL's log)
  std::string self_program;           // this tool, run again as the NCCL test's child; "" when it cannot be
  pyfind::Environment python_search;  // where --python looks (PATH, HOME, uv's, pyenv's, conda's variables)
  static Environment from_process();
};

std::vector<check::Result> run_checks(const Request& request, const Environment& env);
// `links`: the --link-test a request asks for (and nothing else of it) joins the inventory.
std::vector<check::Result> inventory(const Environment& env, const Request& links = {});

// One envcheck run: the inventory when the request asks nothing and names no GPU, else its checks.
struct Report {
  bool inventory = false;
  std::vector<check::Result> results;
  bool failed() const { return check::any_failed(results); }
};
Report run(const Request& request, const Environment& env);
// envcheck --print FIELD: the value of data field FIELD of every check that ran and has it (not
// null), in order: strings as they are, numbers and booleans as JSON writes them, arrays one element
// per value, objects as compact JSON. Empty when none has it.
std::vector<std::string> field_values(const Report& report, const std::string& field);
// envcheck --json: check::to_json with envcheck's version, the mode and the exit code.
nlohmann::json to_json(const Report& report);

}  // namespace provkit::host
