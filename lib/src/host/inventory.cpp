// envcheck with no check asked: what is on this host (driver, libcuda, GPUs,
// peer-to-peer, compiler, nvcc, Python, ROCm, PCIe atomics where readable,
// RoCE GID tables; the link test's measurements when asked). Facts, not verdicts: build
// tools are looked for through the same Probes the checks use, not run.
#include <future>

#include "detail.hpp"
#include "pcie.hpp"
#include "provkit/util/size.hpp"
#include "step_clock.hpp"
#include "system.hpp"

namespace provkit::host {

using namespace detail;

namespace {

// `amd_gpus`: KFD's GPUs. A box with only AMD cards needs no NVIDIA driver: its absence is a fact, not a warning.
Result driver_fact(const gpu::Snapshot& s, std::size_t amd_gpus) {
  Result r{.name = "driver",
           .data = {{"source", s.source == gpu::Source::nvml         ? "nvml"
                               : s.source == gpu::Source::nvidia_smi ? "nvidia-smi"
                                                                     : "none"},
                    {"driver_version", s.driver_version},
                    {"cuda", s.driver_cuda ? cuda_text(s.driver_cuda) : ""}}};
  if (s.driver_version.empty() && amd_gpus > 0) {
    r.reason = "no NVIDIA driver, none needed: the " + std::to_string(amd_gpus) + " GPU" + (amd_gpus > 1 ? "s" : "") +
               " here " + (amd_gpus > 1 ? "are" : "is") + " AMD's (the gpu amdN rows)";
    return r;
  }
  if (s.driver_version.empty()) {
    r.status = Status::warn;
    r.reason = no_driver_reason(s);
    r.fix = kInstallDriver;
    return r;
  }
  r.reason = "NVIDIA driver " + s.driver_version + ", supports CUDA " +
             (s.driver_cuda ? cuda_text(s.driver_cuda) : std::string("(not reported)")) + " (read through " +
             (s.source == gpu::Source::nvml ? "NVML" : "nvidia-smi, NVML could not be opened: " + s.nvml_error) + ")";
  return r;
}

Result libcuda_fact(const gpu::Snapshot& s, const Environment& env) {
  Result r{.name = "libcuda",
           .data = {{"path", s.libcuda_path}, {"cuda", s.libcuda_cuda ? cuda_text(s.libcuda_cuda) : ""}}};
  if (s.libcuda_cuda) {
    r.reason = s.libcuda_path + ": cuDriverGetVersion says CUDA " + cuda_text(s.libcuda_cuda);
  } else {
    r.status = s.driver_version.empty() ? Status::info : Status::warn;
    r.reason = "libcuda.so.1 cannot be used: " + s.libcuda_error;
    if (!s.driver_version.empty())
      r.fix = "install the driver's user-mode CUDA library (libcuda.so.1) of branch " +
              s.driver_version.substr(0, s.driver_version.find('.'));
  }
  r.reason += compat_note(s, env, r.data);
  return r;
}

Result gpu_fact(const gpu::Device& d) {
  auto link = [](int gen, int width) {
    return "gen " + (gen >= 0 ? std::to_string(gen) : "?") + " x" + (width >= 0 ? std::to_string(width) : "?");
  };
  std::string reason = d.name + ", " + d.uuid + ", compute capability " +
                       (d.cc_major >= 0 ? cc_text(d.cc_major, d.cc_minor) : "?");
  if (d.memory_total)
    reason += ", memory " + util::format_size(*d.memory_total) + " total / " +
              (d.memory_free ? util::format_size(*d.memory_free) : "?") + " free";
  reason += ", PCIe " + link(d.pcie.gen_current, d.pcie.width_current) + " now / " +
            link(d.pcie.gen_max, d.pcie.width_max) + " max";
  if (d.pcie.gen_current < d.pcie.gen_max || d.pcie.width_current < d.pcie.width_max)
    reason += " (idle links train down: read the link under load before blaming the slot)";
  reason += seats_text(d.processes);
  return {.name = "gpu " + std::to_string(d.index), .reason = reason, .data = device_json(d)};
}

Result cc_fact(Probes& probes) {
  const auto& compiler = probes.c_compiler();
  if (compiler && compiler->path)
    return {.name = "cc",
            .reason = compiler->command + " at " + compiler->path->string() +
                      (compiler->origin == "CC" ? " (from CC)" : " (from PATH)"),
            .data = {{"path", compiler->path->string()}, {"origin", compiler->origin}},
            .hint = Hint::cc};
  return {.name = "cc",
          .status = Status::warn,
          .reason = compiler ? "CC=" + compiler->command + " is not an executable" : "no C compiler (CC, gcc, clang)",
          .fix = "install gcc: Triton builds launchers with it"};
}

Result nvcc_fact(Probes& probes) {
  const auto& nvcc = probes.nvcc();
  if (!nvcc)
    return {.name = "nvcc",
            .reason = "no nvcc (CUDA_HOME, PATH, " + (probes.env().cuda_root / "cuda").string() +
                      "): only engines' JIT paths need it"};
  std::string release = toolkit_version(nvcc->path.parent_path().parent_path());
  return {.name = "nvcc",
          .reason = nvcc->path.string() + " (from " + nvcc->origin + ")" +
                    (release.empty() ? "" : ", version " + release),
          .data = {{"path", nvcc->path.string()}, {"origin", nvcc->origin}, {"version", release}}};
}

Result python_fact(Probes& probes) {
  const auto& look = probes.python_look();
  Result r{.name = "python",
           .data = {{"interpreter", look.interpreter ? look.interpreter->string() : ""},
                    {"header", look.header ? look.header->string() : ""}}};
  if (!look.interpreter) {
    r.status = Status::warn;
    r.reason = "no python3 on PATH";
  } else if (!look.header) {
    r.status = Status::warn;
    r.reason = "python3 at " + look.interpreter->string() +
               ", but no Python.h found (an interpreter given to envcheck is asked for its own include directory)";
    r.fix = "install the Python headers (apt-get install python3-dev)";
  } else {
    r.reason = "python3 at " + look.interpreter->string() + "; a Python.h at " + look.header->string() +
               " (looked for, not asked: an interpreter given to envcheck is asked for its own include directory)";
  }
  return r;
}

}  // namespace

std::vector<check::Result> inventory(const Environment& env, const Request& links) {
  StepClock clock("inventory");
  Probes probes(env);
  // The driver (NVML's init, libcuda's load: most of the time on a GPU host) is read on a thread of its own
  // while this one looks at what needs no driver; each touches only its own part of `probes`.
  auto driver = std::async(std::launch::async, [&] {
    StepClock own("inventory");
    probes.driver();
    own.lap("driver (NVML beside libcuda), on its own thread");
  });
  std::vector<Result> tools;
  tools.push_back(cc_fact(probes));
  clock.lap("cc");
  tools.push_back(nvcc_fact(probes));
  clock.lap("nvcc");
  tools.push_back(python_fact(probes));
  clock.lap("python");
  Result rocm{.name = "rocm"};
  rocm.reason = rocm_text(probes.rocm(), rocm.data);
  tools.push_back(rocm);
  clock.lap("rocm (libraries, KFD)");
  std::vector<Result> roce;
  roce_rows("", probes, false, roce);
  clock.lap("roce GID tables");
  // The PCIe atomics rows need the driver's bus ids, but the config reads they make (a trap to the hypervisor
  // each, in a VM) need only the bus: the NVIDIA display functions' paths are read now, beside the driver.
  for (const auto& id : display_bus_ids(env.sysfs_root, "0x10de")) probes.atomics_path(id);
  clock.lap("pcie paths of the NVIDIA display functions");
  driver.get();
  clock.lap("then waited for the driver");
  const auto& s = probes.driver();
  std::vector<Result> out;
  out.push_back(driver_fact(s, probes.rocm().gpus.size()));
  out.push_back(libcuda_fact(s, env));
  const auto& vis = probes.visibility();
  for (const auto& d : s.devices) {
    out.push_back(gpu_fact(d));
    auto& row = out.back();
    if (!d.migs.empty()) {
      row.reason += "; MIG mode, " + std::to_string(d.migs.size()) + " instance" + (d.migs.size() > 1 ? "s" : "");
      row.data["mig_instances"] = nlohmann::json::array();
      for (const auto& m : d.migs) row.data["mig_instances"].push_back(mig_json({d.index, "", m}));
    }
    if (auto note = visibility_note(vis, d.index); !note.empty()) {
      row.reason += note;
      row.data["visible"] = false;
    } else if (auto migs = vis.migs_of(d.index); !migs.empty()) {
      // The engine gets these instances of the GPU, not the whole GPU.
      row.reason += "; visible to the engine as MIG instance";
      row.reason += migs.size() > 1 ? "s " : " ";
      row.data["visible_migs"] = nlohmann::json::array();
      for (std::size_t k = 0; k < migs.size(); ++k) {
        row.reason += (k ? ", " : "") + mig_text(*migs[k]);
        row.data["visible_migs"].push_back(mig_json(*migs[k]));
      }
      row.reason += " (CUDA_VISIBLE_DEVICES='" + vis.text + "')";
    }
  }
  if (auto unknown = unknown_mig_row(vis)) out.push_back(*unknown);
  for (const auto& p : s.peers)
    out.push_back({.name = "p2p " + std::to_string(p.a) + "-" + std::to_string(p.b),
                   .reason = "peer-to-peer read " + p.read + ", NVLink " + p.nvlink,
                   .data = {{"a", p.a}, {"b", p.b}, {"read", p.read}, {"nvlink", p.nvlink}}});
  clock.lap("gpu rows");
  for (auto& r : tools) out.push_back(std::move(r));
  pcie_atomics_rows(probes, false, out);
  clock.lap("pcie atomics");
  for (auto& r : roce) out.push_back(std::move(r));
  link_checks(links, probes, out);
  clock.lap("links");
  util::log::debug("host", [&] { return "inventory: " + std::to_string(clock.total_ms()) + " ms in all"; });
  return out;
}

}  // namespace provkit::host
