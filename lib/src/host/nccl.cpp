#include "provkit/host/nccl.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <memory>
#include <optional>
#include <system_error>

#include "cuda_driver.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/process.hpp"
#include "provkit/util/strings.hpp"
#include "shared_library.hpp"

namespace provkit::host::nccl {

// ---- The INFO log --------------------------------------------------------------------------------------------

std::string TransportLine::kind() const { return via.substr(0, via.find('/')); }

namespace {

// "0[0]" or "1[3000]": a rank and what NCCL put in brackets after it.
bool rank_and_device(std::string_view text, int& rank, std::string& device) {
  const auto open = text.find('[');
  if (open == std::string_view::npos || text.back() != ']' || open == 0) return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + open, rank);
  if (ec != std::errc() || p != text.data() + open) return false;
  device = std::string(text.substr(open + 1, text.size() - open - 2));
  return !device.empty();
}

}  // namespace

std::vector<TransportLine> parse_transport_log(std::string_view log) {
  // NCCL 2.19+: "host:pid:tid [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"; older:
  // "Channel 00 : 0[3000] -> 1[4000] via P2P/IPC"; a network hop may say "[send] via NET/IB/0/GDRDMA".
  std::vector<TransportLine> out;
  for (const auto& raw : util::split(std::string(log), '\n')) {
    std::string_view line = raw;
    const auto at = line.find("NCCL INFO Channel ");
    if (at == std::string_view::npos) continue;
    const auto words = util::split(std::string(line.substr(at + 18)), ' ');
    // "00/0", ":", "0[0]", "->", "1[1]", ["[send]"], "via", "P2P/..."
    if (words.size() < 7 || words[1] != ":" || words[3] != "->") continue;
    TransportLine t;
    const std::string channel = words[0].substr(0, words[0].find('/'));
    if (auto [p, ec] = std::from_chars(channel.data(), channel.data() + channel.size(), t.channel);
        ec != std::errc() || p != channel.data() + channel.size())
      continue;
    if (!rank_and_device(words[2], t.from_rank, t.from_device) || !rank_and_device(words[4], t.to_rank, t.to_device))
      continue;
    std::size_t via = 5;
    if (words[via] == "[send]" || words[via] == "[receive]") ++via;
    if (via + 1 >= words.size() || words[via] != "via") continue;
    t.via = util::trim(words[via + 1]);
    if (t.via.empty()) continue;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<PairTransport> pair_transports(const std::vector<TransportLine>& lines) {
  std::vector<PairTransport> out;
  for (const auto& l : lines) {
    auto it = std::find_if(out.begin(), out.end(), [&](const PairTransport& p) {
      return p.from_rank == l.from_rank && p.to_rank == l.to_rank;
    });
    if (it == out.end()) it = out.insert(out.end(), PairTransport{.from_rank = l.from_rank, .to_rank = l.to_rank});
    if (std::find(it->via.begin(), it->via.end(), l.via) == it->via.end()) it->via.push_back(l.via);
  }
  std::sort(out.begin(), out.end(), [](const PairTransport& a, const PairTransport& b) {
    return std::pair(a.from_rank, a.to_rank) < std::pair(b.from_rank, b.to_rank);
  });
  return out;
}

std::optional<std::string> logged_setting(std::string_view log, std::string_view variable) {
  const std::string said = std::string(variable) + " set by environment to ";
  std::optional<std::string> value;
  for (const auto& line : util::split(std::string(log), '\n'))
    if (auto at = line.find(said); at != std::string::npos) {
      std::string v = util::trim(line.substr(at + said.size()));
      if (!v.empty() && v.back() == '.') v.pop_back();
      value = v;  // the last one: what the communicator was made with
    }
  return value;
}

// ---- Figures --------------------------------------------------------------------------------------------------

double algorithm_bandwidth(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

double bus_bandwidth(double algbw, int ranks) { return ranks > 0 ? algbw * 2.0 * (ranks - 1) / ranks : 0; }

std::vector<std::uint64_t> message_sizes(int hidden_size, int max_tokens) {
  std::vector<std::uint64_t> out;
  if (hidden_size <= 0 || max_tokens <= 0) return out;
  const std::uint64_t token = static_cast<std::uint64_t>(hidden_size) * 2;  // bf16
  for (std::uint64_t tokens = 1; tokens < static_cast<std::uint64_t>(max_tokens); tokens *= 8)
    out.push_back(tokens * token);
  out.push_back(static_cast<std::uint64_t>(max_tokens) * token);
  return out;
}

// ---- Where the library is --------------------------------------------------------------------------------------

std::vector<fs::path> site_packages_of(const fs::path& interpreter) {
  std::vector<fs::path> out;
  const fs::path prefix = interpreter.parent_path().parent_path();
  std::error_code ec;
  for (fs::directory_iterator it(prefix / "lib", ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.rfind("python3", 0) == 0 && fs::is_directory(it->path() / "site-packages", ec))
      out.push_back(it->path() / "site-packages");
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Candidate> library_candidates(const std::optional<fs::path>& given,
                                          const std::vector<fs::path>& site_packages,
                                          const std::optional<fs::path>& system) {
  std::vector<Candidate> out;
  auto add = [&](const fs::path& p, const char* source) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) out.push_back({p, source});
  };
  if (given) add(*given, "given");
  for (const auto& sp : site_packages) add(sp / "nvidia/nccl/lib/libnccl.so.2", "wheel");
  for (const auto& sp : site_packages) add(sp / "torch/lib/libnccl.so.2", "torch");
  if (system) add(*system, "system");
  return out;
}

// ---- JSON between the child and the parent ---------------------------------------------------------------------

nlohmann::json to_json(const Measurement& m) {
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& s : m.sizes)
    sizes.push_back({{"bytes", s.bytes},
                     {"iterations", s.iterations},
                     {"latency_us", s.latency_us},
                     {"algbw_gb_per_s", s.algbw_gb_per_s},
                     {"busbw_gb_per_s", s.busbw_gb_per_s}});
  return {{"error", m.error},     {"call", m.call},       {"version", m.version},
          {"library", m.library}, {"bus_ids", m.bus_ids}, {"sizes", sizes}};
}

Measurement measurement_from_json(const nlohmann::json& j) {
  Measurement m;
  m.error = j.at("error").get<std::string>();
  m.call = j.at("call").get<std::string>();
  m.version = j.at("version").get<int>();
  m.library = j.at("library").get<std::string>();
  m.bus_ids = j.at("bus_ids").get<std::vector<std::string>>();
  for (const auto& s : j.at("sizes"))
    m.sizes.push_back({.bytes = s.at("bytes").get<std::uint64_t>(),
                       .iterations = s.at("iterations").get<int>(),
                       .latency_us = s.at("latency_us").get<double>(),
                       .algbw_gb_per_s = s.at("algbw_gb_per_s").get<double>(),
                       .busbw_gb_per_s = s.at("busbw_gb_per_s").get<double>()});
  return m;
}

nlohmann::json to_json(const WorkerOptions& o) {
  return {{"nccl_library", o.nccl_library},
          {"cuda_library", o.cuda_library},
          {"bus_ids", o.bus_ids},
          {"sizes", o.sizes},
          {"warmup", o.warmup},
          {"iterations", o.iterations}};
}

WorkerOptions worker_options_from_json(const nlohmann::json& j) {
  WorkerOptions o;
  o.nccl_library = j.at("nccl_library").get<std::string>();
  o.cuda_library = j.at("cuda_library").get<std::string>();
  o.bus_ids = j.at("bus_ids").get<std::vector<std::string>>();
  o.sizes = j.at("sizes").get<std::vector<std::uint64_t>>();
  o.warmup = j.at("warmup").get<int>();
  o.iterations = j.at("iterations").get<int>();
  return o;
}

// ---- The child: NCCL through dlopen ----------------------------------------------------------------------------

namespace {

// nccl.h's ABI: ncclResult_t 0 = ncclSuccess; ncclBfloat16 = 9, ncclSum = 0.
using ncclResult_t = int;
using ncclComm_t = struct ncclComm*;
constexpr int kBfloat16 = 9;
constexpr int kSum = 0;

struct NcclApi {
  ncclResult_t (*get_version)(int*) = nullptr;
  ncclResult_t (*comm_init_all)(ncclComm_t*, int, const int*) = nullptr;
  ncclResult_t (*all_reduce)(const void*, void*, std::size_t, int, int, ncclComm_t, void*) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  const char* (*error_string)(ncclResult_t) = nullptr;

  void check(ncclResult_t rc, const char* call) const {
    if (rc == 0) return;
    const char* words = error_string ? error_string(rc) : nullptr;
    throw CudaError(call, -1,  // -1: the sentence is the words given
                    std::string(call) + " failed with NCCL error " + std::to_string(rc) +
                        (words && *words ? std::string(" (") + words + ")" : ""));
  }
};

// The communicators of one ncclCommInitAll: destroyed after a clean run, aborted after a failed one (a
// communicator whose operation failed may never finish a destroy).
class Communicators {
 public:
  Communicators(const NcclApi& api, int ranks) : api_(api), comms_(static_cast<std::size_t>(ranks), nullptr) {}
  ~Communicators() {
    for (auto* c : comms_)
      if (c) (clean_ ? api_.comm_destroy : api_.comm_abort)(c);
  }
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;
  ncclComm_t* data() { return comms_.data(); }
  ncclComm_t operator[](std::size_t i) const { return comms_[i]; }
  void finished_cleanly() { clean_ = true; }

 private:
  const NcclApi& api_;
  std::vector<ncclComm_t> comms_;
  bool clean_ = false;
};

// A send and a receive buffer and a stream on one GPU, freed in reverse.
class RankBuffers {
 public:
  RankBuffers(CudaDriver& cuda, int ordinal, std::size_t bytes) : cuda_(cuda), ordinal_(ordinal) {
    send_ = cuda.allocate(ordinal, bytes);
    try {
      recv_ = cuda.allocate(ordinal, bytes);
      stream_ = cuda.create_stream(ordinal);
    } catch (...) {
      release();
      throw;
    }
  }
  ~RankBuffers() { release(); }
  RankBuffers(const RankBuffers&) = delete;
  RankBuffers& operator=(const RankBuffers&) = delete;
  // A CUdeviceptr is the address NCCL takes as a pointer (unified addressing).
  const void* send() const { return std::bit_cast<void*>(static_cast<std::uintptr_t>(send_)); }
  void* recv() const { return std::bit_cast<void*>(static_cast<std::uintptr_t>(recv_)); }
  void* stream() const { return stream_; }
  // Every element of the send buffer set to `bf16`; the first `count` elements of the receive buffer read back.
  void fill_send(std::uint16_t bf16, std::size_t count) { cuda_.fill16(ordinal_, send_, bf16, count); }
  std::vector<std::uint16_t> read_recv(std::size_t count) const {
    std::vector<std::uint16_t> out(count);
    cuda_.copy_to_host(ordinal_, out.data(), recv_, count * sizeof(std::uint16_t), stream_);
    return out;
  }

 private:
  void release() {
    if (stream_) cuda_.destroy_stream(stream_);
    if (recv_) cuda_.free(recv_);
    if (send_) cuda_.free(send_);
    stream_ = nullptr;
    recv_ = send_ = 0;
  }
  CudaDriver& cuda_;
  int ordinal_ = 0;
  std::uint64_t send_ = 0, recv_ = 0;
  void* stream_ = nullptr;
};

// bf16 is the upper half of a float's bits (exact for the small whole numbers used here).
std::uint16_t bf16_bits(float value) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(value) >> 16); }
int bf16_value(std::uint16_t bits) {
  return static_cast<int>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

}  // namespace

Measurement measure(const WorkerOptions& options, void (*progress)(const std::string& step)) {
  Measurement m;
  auto step = [&](const std::string& s) {
    if (progress) progress(s);
  };
  SharedLibrary lib(options.nccl_library);
  if (!lib.loaded()) {
    m.call = "dlopen";
    m.error = lib.error();
    return m;
  }
  m.library = lib.path();
  NcclApi api;
  struct Need {
    void** slot;
    const char* name;
  };
  const Need needs[] = {{reinterpret_cast<void**>(&api.get_version), "ncclGetVersion"},
                        {reinterpret_cast<void**>(&api.comm_init_all), "ncclCommInitAll"},
                        {reinterpret_cast<void**>(&api.all_reduce), "ncclAllReduce"},
                        {reinterpret_cast<void**>(&api.group_start), "ncclGroupStart"},
                        {reinterpret_cast<void**>(&api.group_end), "ncclGroupEnd"},
                        {reinterpret_cast<void**>(&api.comm_destroy), "ncclCommDestroy"},
                        {reinterpret_cast<void**>(&api.comm_abort), "ncclCommAbort"},
                        {reinterpret_cast<void**>(&api.error_string), "ncclGetErrorString"}};
  for (const auto& n : needs) {
    *n.slot = lib.raw_symbol(n.name);
    if (!*n.slot) {
      m.call = "dlsym";
      m.error = m.library + " has no " + n.name;
      return m;
    }
  }
  try {
    api.check(api.get_version(&m.version), "ncclGetVersion");
    CudaDriver cuda(options.cuda_library);
    std::vector<int> ordinals;
    const int n = cuda.device_count();
    for (int i = 0; i < n; ++i) {
      auto id = cuda.pci_bus_id(i);
      if (options.bus_ids.empty() ||
          std::find(options.bus_ids.begin(), options.bus_ids.end(), id) != options.bus_ids.end()) {
        ordinals.push_back(i);
        m.bus_ids.push_back(id);
      }
    }
    if (ordinals.empty()) throw CudaError("cuDeviceGetCount", -1, "libcuda lists none of the selected GPUs");
    const auto ranks = static_cast<int>(ordinals.size());
    step("ncclCommInitAll");
    Communicators comms(api, ranks);
    api.check(api.comm_init_all(comms.data(), ranks, ordinals.data()), "ncclCommInitAll");
    const std::uint64_t largest = options.sizes.empty() ? 0
                                                        : *std::max_element(options.sizes.begin(), options.sizes.end());
    std::vector<std::unique_ptr<RankBuffers>> buffers;
    buffers.reserve(ordinals.size());
    for (int ordinal : ordinals) buffers.push_back(std::make_unique<RankBuffers>(cuda, ordinal, largest));
    // Every rank sends ones, so every element of the sum is the rank count: a library that times well and adds
    // wrong is caught below. (bf16 holds every whole number up to 256 exactly.)
    constexpr std::uint16_t kBf16One = 0x3F80;
    for (const auto& b : buffers) b->fill_send(kBf16One, largest / 2);
    auto all_reduce = [&](std::uint64_t bytes) {
      api.check(api.group_start(), "ncclGroupStart");
      for (std::size_t r = 0; r < buffers.size(); ++r)
        api.check(api.all_reduce(buffers[r]->send(), buffers[r]->recv(), bytes / 2, kBfloat16, kSum, comms[r],
                                 buffers[r]->stream()),
                  "ncclAllReduce");
      api.check(api.group_end(), "ncclGroupEnd");
    };
    auto sync = [&] {
      for (const auto& b : buffers) cuda.synchronize(b->stream());
    };
    for (auto bytes : options.sizes) {
      step("all-reduce of " + std::to_string(bytes) + " bytes");
      for (int i = 0; i < options.warmup; ++i) all_reduce(bytes);
      sync();
      // As nccl-tests: the iterations launched back to back, the clock stopped when every stream is done.
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < options.iterations; ++i) all_reduce(bytes);
      sync();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                             options.iterations;
      SizeTiming t{.bytes = bytes, .iterations = options.iterations, .latency_us = seconds * 1e6};
      t.algbw_gb_per_s = algorithm_bandwidth(bytes, seconds);
      t.busbw_gb_per_s = bus_bandwidth(t.algbw_gb_per_s, ranks);
      m.sizes.push_back(t);
    }
    if (largest > 0) {
      step("reading back the sum of " + std::to_string(largest) + " bytes");
      const auto want = bf16_bits(static_cast<float>(ranks));
      for (std::size_t r = 0; r < buffers.size(); ++r) {
        const auto got = buffers[r]->read_recv(largest / 2);
        if (auto bad = std::find_if(got.begin(), got.end(), [&](std::uint16_t v) { return v != want; });
            bad != got.end())
          throw CudaError("ncclAllReduce", -1,
                          "ncclAllReduce summed wrong: rank " + std::to_string(r) + " has " +
                              std::to_string(bf16_value(*bad)) + " at element " + std::to_string(bad - got.begin()) +
                              " where " + std::to_string(ranks) + " ranks of ones sum to " + std::to_string(ranks));
      }
    }
    buffers.clear();
    comms.finished_cleanly();
  } catch (const CudaError& e) {
    m.call = e.call;
    m.error = e.what();
  }
  return m;
}

// ---- The parent: the child run with a deadline -----------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> child_settings(const fs::path& log) {
  return {{"NCCL_NVLS_ENABLE", "0"},
          {"NCCL_DEBUG", "INFO"},
          {"NCCL_DEBUG_SUBSYS", "INIT,ENV"},
          {"NCCL_DEBUG_FILE", log.string()}};
}

TestReport run_test(const TestOptions& options) {
  TestReport report;
  const fs::path log = options.scratch / "nccl-debug.log";
  util::RunOptions run;
  run.stderr_to = util::StderrTo::discard;
  run.timeout = options.timeout;
  run.env_set = child_settings(log);
  auto result = util::run({options.program, options.worker_flag, to_json(options.worker).dump()}, run);
  // stdout: "step: ..." lines as the child goes, then its result as one JSON line.
  std::optional<Measurement> measured;
  for (const auto& line : util::split(result.output, '\n')) {
    if (line.rfind("step: ", 0) == 0) {
      report.last_step = line.substr(6);
      continue;
    }
    if (line.empty() || line.front() != '{') continue;
    try {
      measured = measurement_from_json(nlohmann::json::parse(line));
    } catch (const std::exception&) {
      report.child_error = "its result could not be read";
    }
  }
  report.timed_out = result.timed_out;
  if (!result.start_error.empty()) report.child_error = "it could not start: " + result.start_error;
  else if (result.timed_out) report.child_error = "it did not finish within its time and was killed";
  else if (result.term_signal) report.child_error = "it was killed by signal " + std::to_string(result.term_signal);
  else if (!measured && report.child_error.empty())
    report.child_error = "it exited " + std::to_string(result.exit_status) + " without a result";
  if (measured) report.measurement = *measured;
  std::string text;
  try {
    text = util::read_file_head(log, 16u << 20);
  } catch (const Error&) {}
  report.transports = pair_transports(parse_transport_log(text));
  report.nvls_enable = logged_setting(text, "NCCL_NVLS_ENABLE");
  for (const auto& line : util::split(text, '\n'))
    if (auto at = line.find("P2P is disabled"); at != std::string::npos) {
      // NCCL's words, without its "host:pid:tid [dev] NCCL INFO " prefix.
      const auto info = line.rfind("NCCL INFO ", at);
      report.p2p_notes.push_back(util::trim(line.substr(info == std::string::npos ? at : info + 10)));
    }
  std::error_code ec;
  fs::remove(log, ec);
  return report;
}

}  // namespace provkit::host::nccl
