#pragma once
// The engine's own NCCL, measured before the engine starts: the libnccl.so.2 it will load (found in its Python
// environment, else the system's), an all-reduce in bf16 over the selected GPUs in one process
// (ncclCommInitAll), timed per message size from one token's hidden state up to a prefill, and the transport
// NCCL chose per pair as its INFO log states it. The measurement runs in a child process (the tool itself,
// run again through util::run) with a deadline, so a hang in NCCL ends in a killed child, never a hung check,
// and with NCCL_NVLS_ENABLE=0 set over whatever the caller's environment says (no multicast objects on a
// shared host).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::host::nccl {

namespace fs = std::filesystem;

// ---- Pure parts ------------------------------------------------------------------------------------------------

// One "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read" line of NCCL's INFO log.
struct TransportLine {
  int channel = 0;
  int from_rank = 0, to_rank = 0;
  std::string from_device, to_device;  // what NCCL writes in brackets: a CUDA ordinal, or a bus id in older logs
  std::string via;                     // "P2P/CUMEM/read", "SHM/direct/direct", "NET/IB/0/GDRDMA"
  std::string kind() const;            // the first word of via: "P2P", "SHM", "NET" (or what NCCL wrote)
};
// Each line of `log` that states a channel's transport. Lines that say something else are skipped.
std::vector<TransportLine> parse_transport_log(std::string_view log);

// One pair's transports: from_rank -> to_rank and each distinct `via` over its channels.
struct PairTransport {
  int from_rank = 0, to_rank = 0;
  std::vector<std::string> via;
  bool operator==(const PairTransport&) const = default;
};
std::vector<PairTransport> pair_transports(const std::vector<TransportLine>& lines);

// What NCCL logs of a variable it read ("NCCL_NVLS_ENABLE set by environment to 0."): the value, or nullopt.
std::optional<std::string> logged_setting(std::string_view log, std::string_view variable);

// nccl-tests' figures for an all-reduce of `bytes` over `ranks` that took `seconds` per operation:
// algbw = bytes / seconds, busbw = algbw * 2 (ranks - 1) / ranks (the bytes each link carries).
double algorithm_bandwidth(std::uint64_t bytes, double seconds);  // GB/s (10^9 bytes)
double bus_bandwidth(double algbw, int ranks);

// The message sizes measured: one token's hidden state (hidden x 2 bytes of bf16) up to `max_tokens` of them.
std::vector<std::uint64_t> message_sizes(int hidden_size, int max_tokens = 8192);

// Where the engine's libnccl.so.2 is looked for, in order; each candidate says where it came from.
struct Candidate {
  fs::path path;
  std::string source;  // "given", "wheel" (nvidia-nccl-cu*), "torch", "system"
};
// The site-packages folders of a Python environment, from its interpreter's path as given (a venv's
// bin/python is not resolved: its prefix is the venv): PREFIX/lib/python3.*/site-packages.
std::vector<fs::path> site_packages_of(const fs::path& interpreter);
// The candidates that are files, in order: `given`, each site-packages' nvidia/nccl/lib/libnccl.so.2, then
// its torch/lib/libnccl.so.2, then `system` (the loader's answer for libnccl.so.2, when it has one).
std::vector<Candidate> library_candidates(const std::optional<fs::path>& given,
                                          const std::vector<fs::path>& site_packages,
                                          const std::optional<fs::path>& system);

// ---- The measurement -------------------------------------------------------------------------------------------

struct SizeTiming {
  std::uint64_t bytes = 0;
  int iterations = 0;
  double latency_us = 0;      // per all-reduce
  double algbw_gb_per_s = 0;  // as nccl-tests
  double busbw_gb_per_s = 0;
};

// What the child measured (it prints this as JSON; the parent reads it back).
struct Measurement {
  std::string error;  // empty: every size ran
  std::string call;   // the call that failed ("ncclCommInitAll")
  int version = 0;    // ncclGetVersion: 22105 for 2.21.5
  std::string library;
  std::vector<std::string> bus_ids;  // the ranks' GPUs, in rank order
  std::vector<SizeTiming> sizes;
};
nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j);

struct WorkerOptions {
  std::string nccl_library;
  std::string cuda_library = "libcuda.so.1";
  std::vector<std::string> bus_ids;  // the GPUs, by CUDA's bus id; empty: every one libcuda lists
  std::vector<std::uint64_t> sizes;
  int warmup = 5, iterations = 20;  // nccl-tests' defaults
};
nlohmann::json to_json(const WorkerOptions& o);
WorkerOptions worker_options_from_json(const nlohmann::json& j);

// The child's side, in this process: never throws for NCCL or CUDA refusing (the error is in the result); every
// buffer, stream and communicator is freed on every path. `progress` is told each step ("ncclCommInitAll",
// "all-reduce 10240 bytes") before it starts, so that a parent that kills a hung child can say where it hung.
Measurement measure(const WorkerOptions& options, void (*progress)(const std::string& step));

struct TestOptions {
  std::string program;  // what runs the child: this tool, given `worker_flag` and the options as JSON
  std::string worker_flag = "--nccl-worker";
  WorkerOptions worker;
  std::chrono::milliseconds timeout{60000};
  fs::path scratch;  // a folder for NCCL's log (NCCL_DEBUG_FILE)
};

struct TestReport {
  Measurement measurement;
  bool timed_out = false;
  std::string last_step;    // the step the child had reached when it was killed or failed
  std::string child_error;  // it could not start, died, or printed no result
  std::vector<PairTransport> transports;
  std::optional<std::string> nvls_enable;  // as NCCL logged reading it
  std::vector<std::string> p2p_notes;      // NCCL's own lines about P2P being disabled
};
// The environment the child gets over this process's: NCCL_NVLS_ENABLE=0, NCCL_DEBUG=INFO,
// NCCL_DEBUG_SUBSYS=INIT,ENV, NCCL_DEBUG_FILE=`log`.
std::vector<std::pair<std::string, std::string>> child_settings(const fs::path& log);
TestReport run_test(const TestOptions& options);

}  // namespace provkit::host::nccl
