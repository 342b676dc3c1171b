// envcheck's run: the probes it shares, and the checks a Request asks for,
// in the order the table shows them.
#include "detail.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <thread>

#include "provkit/util/paths.hpp"
#include "provkit/util/size.hpp"

namespace provkit::host {

namespace detail {

const gpu::Snapshot& Probes::driver() {
  if (!driver_) driver_ = gpu::probe(env_.driver);
  return *driver_;
}

const gpu::Visibility& Probes::visibility() {
  if (!visibility_) visibility_ = gpu::cuda_visibility(driver().devices, env_.cuda_visible_devices);
  return *visibility_;
}

std::vector<gpu::Device> Probes::engine_gpus() { return gpu::engine_devices(driver().devices, visibility()); }

std::vector<rocm::AmdGpu> Probes::engine_amd_gpus() {
  return rocm::visible_gpus(rocm().gpus, env_.rocr_visible_devices, env_.hip_visible_devices);
}

std::string visibility_note(const gpu::Visibility& v, int index) {
  if (v.visible(index)) return "";
  return "; not visible to the engine (CUDA_VISIBLE_DEVICES='" + v.text + "')";
}

std::string mig_text(const gpu::VisibleMig& m) {
  const auto& i = m.instance;
  std::string t = i.uuid + " (GPU instance " + std::to_string(i.gpu_instance) + ", compute instance " +
                  std::to_string(i.compute_instance);
  if (!i.name.empty()) t += ", " + i.name;
  if (i.memory_total)
    t += ", memory " + util::format_size(*i.memory_total) + " total / " +
         (i.memory_free ? util::format_size(*i.memory_free) : "?") + " free";
  return t + ")";
}

nlohmann::json mig_json(const gpu::VisibleMig& m) {
  const auto& i = m.instance;
  return {{"entry", m.entry},
          {"uuid", i.uuid},
          {"name", i.name},
          {"gpu_instance", i.gpu_instance},
          {"compute_instance", i.compute_instance},
          {"memory_total", i.memory_total ? nlohmann::json(*i.memory_total) : nlohmann::json(nullptr)},
          {"memory_free", i.memory_free ? nlohmann::json(*i.memory_free) : nlohmann::json(nullptr)}};
}

std::optional<Result> unknown_mig_row(const gpu::Visibility& v) {
  if (v.unknown_migs.empty()) return std::nullopt;
  std::string ids;
  for (const auto& e : v.unknown_migs) ids += (ids.empty() ? "" : ", ") + e;
  return Result{.name = "cuda-visible-devices",
                .status = Status::warn,
                .rule = Rule::gpu_selector,
                .reason = "CUDA_VISIBLE_DEVICES='" + v.text + "' names " + ids +
                          ", which no MIG instance of the driver has: it gives the engine no GPU (the other entries "
                          "still count)",
                .fix =
                    "name MIG instances by the MIG- UUIDs `nvidia-smi -L` lists (they change when instances are "
                    "re-created)",
                .data = {{"cuda_visible_devices", v.text}, {"unknown_migs", v.unknown_migs}}};
}

const std::optional<toolchain::Compiler>& Probes::c_compiler() {
  if (!c_compiler_) c_compiler_ = toolchain::find_c_compiler(env_.cc_env, env_.path_env);
  return *c_compiler_;
}

const std::optional<toolchain::Nvcc>& Probes::nvcc() {
  if (!nvcc_) nvcc_ = toolchain::find_nvcc(env_.cuda_home, env_.path_env, env_.cuda_root / "cuda");
  return *nvcc_;
}

const toolchain::PythonLook& Probes::python_look() {
  if (!python_look_) python_look_ = toolchain::look_for_python(env_.path_env);
  return *python_look_;
}

const elf::SearchContext& Probes::search_context() {
  if (!search_context_) {
    auto ctx = elf::loader_context_from_environment();
    ctx.ld_library_path = elf::split_ld_library_path(env_.ld_library_path);
    search_context_ = std::move(ctx);
  }
  return *search_context_;
}

const RocmFacts& Probes::rocm() {
  if (!rocm_) {
    rocm_ = RocmFacts{rocm::find_runtime_libraries(search_context(), env_.rocm_path),
                      rocm::read_kfd_topology(env_.sysfs_root, env_.hsa_xnack)};
    std::vector<gpu::GpuProcess*> processes;  // who each KFD process is, as on NVIDIA
    for (auto& g : rocm_->gpus)
      for (auto& p : g.processes) processes.push_back(&p);
    gpu::describe_processes(env_.driver.proc_root, processes);
  }
  return *rocm_;
}

const AtomicsPath& Probes::atomics_path(const std::string& bdf) {
  auto it = atomics_paths_.find(bdf);
  if (it == atomics_paths_.end()) it = atomics_paths_.emplace(bdf, read_atomics_path(env_.sysfs_root, bdf)).first;
  return it->second;
}

namespace {

// --wait: the port and free-memory gates asked again, each round with a fresh look at the driver, until every
// one holds or the time ends; the rows are the last round's, each saying how long it waited.
void wait_for_gates(const Request& req, const Environment& env, std::vector<Result>& out) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kRound = std::chrono::milliseconds(250);
  auto waitable = [](const Result& r) { return r.rule == Rule::port_bindable || r.rule == Rule::vram_free; };
  auto failing = [&] {
    return std::any_of(out.begin(), out.end(),
                       [&](const Result& r) { return waitable(r) && r.status == Status::fail; });
  };
  std::set<std::string> waited_for;  // the rows that failed at first: the ones the wait is about
  for (const auto& r : out)
    if (waitable(r) && r.status == Status::fail) waited_for.insert(r.name);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*req.wait));
  Request again;  // only what is waited for, and what chooses the NVIDIA or the AMD rows as the first look did
  again.gpus = req.gpus;
  again.needs = req.needs;
  again.min_cc = req.min_cc;
  again.arch_list = req.arch_list;
  again.vram_free = req.vram_free;
  again.vram_free_text = req.vram_free_text;
  again.ports = req.ports;
  while (failing() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::min<Clock::duration>(kRound, deadline - Clock::now()));
    std::vector<Result> fresh;
    Probes probes(env);
    if (again.vram_free) gpu_checks(again, probes, fresh);
    for (const auto& p : again.ports) fresh.push_back(port_check(p));
    for (auto& r : out) {
      if (!waitable(r)) continue;
      auto now = std::find_if(fresh.begin(), fresh.end(), [&](const Result& f) { return f.name == r.name; });
      if (now != fresh.end()) r = std::move(*now);
    }
  }
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", waited);
  for (auto& r : out) {
    if (!waitable(r) || !waited_for.count(r.name)) continue;
    r.data["waited_s"] = std::round(waited * 10) / 10;
    if (r.status == Status::fail) r.reason += std::string("; still so after waiting ") + text + " s";
    else r.reason += std::string(" (after waiting ") + text + " s)";
  }
}

}  // namespace

}  // namespace detail

std::vector<check::Result> run_checks(const Request& req, const Environment& env) {
  using namespace detail;
  std::vector<Result> out;
  Probes probes(env);
  if (req.cuda) out.push_back(cuda_check(req, probes));
  gpu_checks(req, probes, out);
  if (req.cc) out.push_back(cc_check(probes));
  if (req.nvcc) out.push_back(nvcc_check(probes));
  if (req.python) out.push_back(python_check(*req.python, probes));
  for (const auto& l : req.libs) out.push_back(lib_check(l, probes));
  for (const auto& e : req.elfs) elf_checks(e, probes, out);
  if (!req.kernels.empty()) kernel_checks(req, probes, out);
  if (req.rocm) out.push_back(rocm_check(probes));
  for (const auto& g : req.gfx) out.push_back(gfx_check(g, req, probes));
  link_checks(req, probes, out);
  nccl_checks(req, probes, out);
  if (req.pcie_atomics) pcie_atomics_rows(probes, true, out);
  if (req.roce) roce_rows(*req.roce, probes, true, out);
  for (const auto& d : req.disks) out.push_back(disk_check(d));
  for (const auto& p : req.ports) out.push_back(port_check(p));
  for (const auto& f : req.files) out.push_back(file_check(f));
  if (req.engine) out.push_back(engine_fit_check(req, probes));
  if (req.wait) wait_for_gates(req, env, out);
  return out;
}

}  // namespace provkit::host
