// envcheck's NCCL rows (--nccl-test, --min-busbw, --max-allreduce-us): which libnccl.so.2 the engine would
// load, its bf16 all-reduce per size over the selected GPUs, the transport per pair, and the gates. The
// measurement is host/nccl; this turns it into check::Results.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "detail.hpp"
#include "provkit/host/nccl.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::host::detail {

namespace {

using nlohmann::json;

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
// "22105" -> "2.21.5" (NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9).
std::string version_text(int code) {
  if (code <= 0) return "?";
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}
std::string size_text(std::uint64_t bytes, int hidden) {
  const auto tokens = bytes / (static_cast<std::uint64_t>(hidden) * 2);
  return util::format_size(bytes) + " (" + std::to_string(tokens) + (tokens == 1 ? " token" : " tokens") + ")";
}

const char* const kNcclFix =
    "run the engine's own check (torchrun with an all-reduce) to see NCCL's words; NCCL_DEBUG=INFO names the step";

// The library the engine loads: the one given, its Python environment's, the system's.
std::optional<nccl::Candidate> engine_library(const Request& req, Probes& probes, json& data) {
  std::vector<fs::path> site;
  if (req.python && req.python->find('/') != std::string::npos) site = nccl::site_packages_of(*req.python);
  std::optional<fs::path> system;
  if (auto found = elf::find_library("libnccl.so.2", probes.search_context()); found.path) system = *found.path;
  const auto candidates = nccl::library_candidates(req.nccl_lib.empty() ? std::nullopt
                                                                        : std::optional<fs::path>(req.nccl_lib),
                                                   site, system);
  json all = json::array();
  for (const auto& c : candidates) all.push_back({{"path", c.path.string()}, {"source", c.source}});
  data["candidates"] = all;
  json looked = json::array();
  for (const auto& s : site) looked.push_back(s.string());
  data["site_packages"] = looked;
  if (!req.nccl_lib.empty() && (candidates.empty() || candidates.front().source != "given")) return std::nullopt;
  if (candidates.empty()) return std::nullopt;
  return candidates.front();
}

}  // namespace

void nccl_checks(const Request& req, Probes& probes, std::vector<Result>& out) {
  if (!req.wants_nccl_test()) return;
  Result row{.name = "nccl all-reduce", .status = Status::fail, .rule = Rule::nccl_allreduce, .fix = kNcclFix};
  const auto library = engine_library(req, probes, row.data);
  if (!library) {
    const bool given = !req.nccl_lib.empty();
    row.reason = given ? req.nccl_lib + " is not a file"
                       : "no libnccl.so.2 found (the engine's Python environment, when one is given as a path: "
                         "nvidia/nccl/lib or torch/lib under its site-packages; then the loader's search)";
    row.fix = "install the engine's environment (pip's nvidia-nccl-cu12 wheel)";
    row.hint = given ? Hint::nccl_lib_given : Hint::nccl_lib;
    out.push_back(row);
    return;
  }
  row.data["library"] = library->path.string();
  row.data["source"] = library->source;
  auto bus_ids = measured_bus_ids(req, probes, row.name, Rule::nccl_allreduce, "all-reduce over", out);
  if (!bus_ids) return;
  if (probes.env().self_program.empty()) {
    row.reason = "no program to run the measurement in (this tool's path is unknown)";
    out.push_back(row);
    return;
  }
  nccl::TestOptions options{.program = probes.env().self_program,
                            .worker = {.nccl_library = library->path.string(),
                                       .cuda_library = probes.env().driver.cuda_library,
                                       .bus_ids = *bus_ids,
                                       .sizes = nccl::message_sizes(req.hidden_size)},
                            .timeout = std::chrono::milliseconds(static_cast<long long>(req.nccl_timeout * 1000)),
                            .scratch = probes.env().tmpdir};
  // NCCL's log goes to a folder of this run's own, so that two runs never read each other's.
  std::string scratch = (options.scratch / "envcheck-nccl-XXXXXX").string();
  if (!::mkdtemp(scratch.data())) {
    row.reason = "cannot make a scratch directory for NCCL's log in " + options.scratch.string();
    out.push_back(row);
    return;
  }
  options.scratch = scratch;
  const auto report = nccl::run_test(options);
  std::error_code ec;
  fs::remove_all(scratch, ec);

  const auto& m = report.measurement;
  const std::string who = library->path.string() + " (" + library->source + ")";
  row.data["version"] = version_text(m.version);
  row.data["ranks"] = m.bus_ids.size();
  row.data["bus_ids"] = m.bus_ids;
  row.data["nvls_enable"] = report.nvls_enable ? json(*report.nvls_enable) : json(nullptr);
  row.data["timed_out"] = report.timed_out;
  row.data["timeout_s"] = req.nccl_timeout;
  row.data["p2p_notes"] = report.p2p_notes;
  json transports = json::array();
  for (const auto& p : report.transports)
    transports.push_back({{"from_rank", p.from_rank}, {"to_rank", p.to_rank}, {"via", p.via}});
  row.data["transports"] = transports;
  if (!report.child_error.empty() || !m.error.empty()) {
    row.data["error"] = m.error;
    row.data["call"] = m.call;
    row.data["last_step"] = report.last_step;
    if (report.timed_out)
      row.reason = who + ": NCCL did not finish within " + fixed(req.nccl_timeout, 0) + " s (it was in " +
                   (report.last_step.empty() ? "its start" : report.last_step) + ") and was killed";
    else if (!m.error.empty()) row.reason = who + ": " + m.error;
    else row.reason = who + ": the measurement " + report.child_error;
    out.push_back(row);
    return;
  }
  row.status = Status::pass;
  row.fix.clear();
  const auto ranks = static_cast<int>(m.bus_ids.size());
  row.reason = "NCCL " + version_text(m.version) + " from " + who + ", " + std::to_string(ranks) +
               (ranks == 1 ? " GPU" : " GPUs") + ", NCCL_NVLS_ENABLE=" + report.nvls_enable.value_or("0 (not logged)");
  if (!m.sizes.empty()) {
    const auto& first = m.sizes.front();
    const auto& last = m.sizes.back();
    row.reason += "; one token (" + util::format_size(first.bytes) + "): " + fixed(first.latency_us, 1) + " us; " +
                  util::format_size(last.bytes) + ": bus " + fixed(last.busbw_gb_per_s, 2) + " GB/s";
    if (req.layers) {
      const double floor_us = 2.0 * *req.layers * first.latency_us;
      row.data["layers"] = *req.layers;
      row.data["per_token_floor_us"] = floor_us;
      row.reason += "; the floor under one token: " + fixed(floor_us / 1000, 2) + " ms (2 x " +
                    std::to_string(*req.layers) + " layers x " + fixed(first.latency_us, 1) + " us)";
    }
  }
  out.push_back(row);

  for (const auto& t : m.sizes)
    out.push_back({.name = "nccl all-reduce " + util::format_size(t.bytes),
                   .status = Status::info,
                   .rule = Rule::nccl_allreduce,
                   .reason = size_text(t.bytes, req.hidden_size) + ": " + fixed(t.latency_us, 1) + " us, algbw " +
                             fixed(t.algbw_gb_per_s, 2) + " GB/s, busbw " + fixed(t.busbw_gb_per_s, 2) + " GB/s over " +
                             std::to_string(t.iterations) + " iterations",
                   .data = {{"bytes", t.bytes},
                            {"tokens", t.bytes / (static_cast<std::uint64_t>(req.hidden_size) * 2)},
                            {"iterations", t.iterations},
                            {"latency_us", t.latency_us},
                            {"algbw_gb_per_s", t.algbw_gb_per_s},
                            {"busbw_gb_per_s", t.busbw_gb_per_s},
                            {"ranks", ranks}}});
  for (const auto& p : report.transports) {
    const bool direct = std::all_of(p.via.begin(), p.via.end(), [](const std::string& v) {
      return v.rfind("P2P", 0) == 0 || v.rfind("NVLS", 0) == 0;
    });
    Result r{.name = "nccl transport " + std::to_string(p.from_rank) + "-" + std::to_string(p.to_rank),
             .status = direct ? Status::info : Status::warn,
             .rule = Rule::nccl_transport,
             .reason = "rank " + std::to_string(p.from_rank) + " (" +
                       (p.from_rank < ranks ? m.bus_ids[static_cast<std::size_t>(p.from_rank)] : "?") + ") -> rank " +
                       std::to_string(p.to_rank) + " (" +
                       (p.to_rank < ranks ? m.bus_ids[static_cast<std::size_t>(p.to_rank)] : "?") + ") via " +
                       util::join(p.via, ','),
             .data = {{"from_rank", p.from_rank}, {"to_rank", p.to_rank}, {"via", p.via}}};
    if (!direct) {
      r.reason += ": not peer-to-peer, every all-reduce between them is staged";
      if (!report.p2p_notes.empty()) r.reason += " (NCCL: " + report.p2p_notes.front() + ")";
      r.fix =
          "GPUs without P2P between them (GeForce cards, ACS on the PCIe switch, an IOMMU in translated mode) "
          "pay this on every layer: see the link test's peer rows";
      r.hint = Hint::link_test;
    }
    out.push_back(r);
  }

  if (req.min_busbw) {
    Result r{.name = "min-busbw", .status = Status::fail, .rule = Rule::min_busbw, .threshold = req.min_busbw_text};
    if (m.sizes.empty() || ranks < 2) {
      r.reason = "no bus bandwidth to compare: " +
                 (ranks < 2 ? std::string("one GPU has no bus (bus bandwidth is 0 by nccl-tests' rule)")
                            : std::string("no size was measured"));
      r.fix = "select at least two GPUs";
      r.hint = Hint::gpu_selection;
    } else {
      const auto& last = m.sizes.back();
      r.data = {{"bytes", last.bytes}, {"busbw_gb_per_s", last.busbw_gb_per_s}};
      r.reason = "all-reduce of " + size_text(last.bytes, req.hidden_size) + ": bus " + fixed(last.busbw_gb_per_s, 2) +
                 " GB/s";
      if (last.busbw_gb_per_s >= *req.min_busbw) {
        r.status = Status::pass;
        r.reason += " >= " + req.min_busbw_text + " GB/s";
      } else {
        r.reason += " < " + req.min_busbw_text + " GB/s asked";
        r.fix =
            "read the transport rows: SHM or NET between GPUs of one host means no P2P; else, for a slot that "
            "trained down, the link test's rows";
        r.hint = Hint::link_test;
      }
    }
    out.push_back(r);
  }
  if (req.max_allreduce_us) {
    Result r{.name = "max-allreduce-us",
             .status = Status::fail,
             .rule = Rule::max_allreduce_us,
             .threshold = req.max_allreduce_us_text};
    if (m.sizes.empty()) {
      r.reason = "no size was measured";
    } else {
      const auto& first = m.sizes.front();
      r.data = {{"bytes", first.bytes}, {"latency_us", first.latency_us}};
      r.reason = "all-reduce of " + size_text(first.bytes, req.hidden_size) + ": " + fixed(first.latency_us, 1) + " us";
      if (first.latency_us <= *req.max_allreduce_us) {
        r.status = Status::pass;
        r.reason += " <= " + req.max_allreduce_us_text + " us";
      } else {
        r.reason += " > " + req.max_allreduce_us_text + " us asked";
        r.fix =
            "one token pays this twice per layer: read the transport rows (SHM staging, NET) before blaming the "
            "model";
      }
    }
    out.push_back(r);
  }
}

}  // namespace provkit::host::detail
