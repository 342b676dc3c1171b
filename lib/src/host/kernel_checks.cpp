// envcheck --kernels: every library under the given paths, what kernels it
// carries, and whether any of them runs on each GPU of this box (kernels.hpp).
#include <chrono>
#include <future>
#include <map>

#include "code_verdict.hpp"
#include "detail.hpp"
#include "provkit/kernels/listing.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::host::detail {

namespace {

using code_verdict::Gpu;

struct Target {
  Gpu gpu;
  nlohmann::json indices = nlohmann::json::array();
};

// One verdict per kind of GPU: the selected NVIDIA GPUs grouped by name and
// compute capability, then the AMD GPUs of KFD grouped by gfx target.
std::vector<Target> targets(const Request& req, Probes& probes) {
  std::vector<Target> out;
  std::map<std::string, std::size_t> by_key;
  std::vector<const gpu::Device*> devices;
  const auto visible = probes.engine_gpus();  // CUDA_VISIBLE_DEVICES honoured
  if (req.gpus.empty()) {
    for (const auto& d : visible) devices.push_back(&d);
  } else {
    for (const auto& sel : req.gpus)
      if (const auto* d = gpu::select_device(visible, sel)) devices.push_back(d);  // gpu_checks names the unknown ones
  }
  std::map<std::string, std::vector<int>> members;
  for (const auto* d : devices) {
    if (d->cc_major < 0) continue;
    const std::string key = (d->name.empty() ? "unnamed" : d->name) + ", sm_" + std::to_string(d->cc_major) +
                            std::to_string(d->cc_minor);
    if (!by_key.count(key)) {
      by_key[key] = out.size();
      out.push_back({Gpu{.label = "", .cc = gpucode::Version{d->cc_major, d->cc_minor}}});
    }
    auto& t = out[by_key[key]];
    t.indices.push_back(d->index);
    members[key].push_back(d->index);
  }
  for (auto& member : members) {
    const std::string& key = member.first;
    const auto& idx = member.second;  // not a structured binding: clang 14 takes none into a lambda
    std::string list = std::to_string(idx.front());
    if (idx.size() > 1)
      list = (idx.back() - idx.front() + 1 == static_cast<int>(idx.size()))
                 ? std::to_string(idx.front()) + "-" + std::to_string(idx.back())
                 : [&] {
                     std::string l;
                     for (int i : idx) l += (l.empty() ? "" : ",") + std::to_string(i);
                     return l;
                   }();
    out[by_key[key]].gpu.label = util::concat({"GPU ", list, " (", key, ")"});
  }
  // By target id ("gfx90a:xnack-"): GPUs of one processor in different modes load different code objects.
  std::map<std::string, std::size_t> by_target;
  for (const auto& g : probes.engine_amd_gpus()) {  // ROCR_/HIP_VISIBLE_DEVICES honoured
    if (g.gfx_target.empty()) continue;
    const auto id = g.target_id();
    if (!by_target.count(id)) {
      by_target[id] = out.size();
      out.push_back({Gpu{.label = "AMD " + id, .gfx = g.gfx_target, .xnack = g.xnack, .sramecc = g.sramecc}});
    }
    out[by_target[id]].indices.push_back(g.node);
  }
  return out;
}

int severity(Status s) { return s == Status::fail ? 3 : s == Status::warn ? 2 : s == Status::pass ? 1 : 0; }

std::string fix_for(const kernels::Library& lib, const Gpu& gpu, const std::string& reason) {
  const auto file = lib.path.filename().string();
  if (!gpu.gfx.empty())  // a build with no feature named loads in either mode
    return "install a build of " + file + " for " + gpu.gfx + " (hipcc --offload-arch=" + gpu.gfx + ")";
  const auto arch = std::to_string(gpu.cc->major) + std::to_string(gpu.cc->minor);
  std::string fix = "install a build of " + file + " that carries sm_" + std::to_string(gpu.cc->major) +
                    "X cubins (X <= " + std::to_string(gpu.cc->minor) + ") or PTX at or below compute_" + arch +
                    " (nvcc -gencode arch=compute_" + arch + ",code=sm_" + arch + ")";
  if (reason.find("needs a driver") != std::string::npos)
    fix = "update the NVIDIA driver to one for the CUDA release its PTX needs, or " + fix;
  return fix;
}

}  // namespace

void kernel_checks(const Request& req, Probes& probes, std::vector<Result>& out) {
  const auto started = std::chrono::steady_clock::now();
  // Where a cold run's time goes: the walk (one directory after another), the driver, or the reads.
  const auto since = [&started] {
    return std::to_string(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  };
  // The GPUs (NVML's init and libcuda's load: 0.1 s on the GPU host) are read on a thread of their own while
  // this one walks the paths and the libraries are read; only judging waits for them. That thread touches the
  // driver's and ROCm's parts of `probes`; the search context they share is made here first.
  struct Known {
    std::vector<Target> gpus;
    int driver_cuda = 0;
  };
  const auto& search = probes.search_context();
  const std::shared_future<Known> known = std::async(std::launch::async, [&] {
                                            Known k{targets(req, probes), probes.driver().driver_cuda};
                                            util::log::debug("host", [&] {
                                              return "kernels: GPUs and driver known at " + since() + " ms";
                                            });
                                            return k;
                                          }).share();
  auto collected = kernels::collect_objects(req.kernels, search);
  util::log::debug("host", [&] {
    return "kernels: " + std::to_string(collected.objects.size()) + " objects found in " + since() + " ms";
  });
  std::size_t with_code = 0, images = 0;
  nlohmann::json unreadable = nlohmann::json::array();
  for (const auto& u : collected.unreadable) unreadable.push_back(u);
  for (const auto& arg : req.kernels) {
    std::error_code ec;
    if (!fs::exists(arg, ec))
      out.push_back({.name = "kernels " + arg,
                     .status = Status::fail,
                     .rule = Rule::elf_readable,
                     .reason = arg + " does not exist",
                     .fix = "name a library or a directory of libraries (a site-packages)",
                     .data = {{"path", arg}}});
  }
  std::vector<Result> rows;
  // What the run may decompress over all its files, and each file (kernels::Budget).
  kernels::RunBudget budget;
  // Fatbins kept as data (.ldata) are looked for only when what the runtime registers does not run; on the
  // thread that listed the file, so cuFFT's 278 MB .ldata is read beside the other files, not after them.
  auto settle = [&](kernels::Listing& listing) {
    if (!listing.library.has_device_code()) return;
    const auto object = listing.library.path;
    const Known& k = known.get();  // not a structured binding: clang 14 takes none into a lambda
    const auto& gpus = k.gpus;
    const int driver_cuda = k.driver_cuda;
    bool settled = true;
    for (const auto& t : gpus)
      settled &= code_verdict::judge(listing.library, t.gpu, driver_cuda).status != Status::fail;
    try {
      if (!settled && kernels::has_data_sections(object)) {
        // Enough when every GPU has a cubin that runs (AMD's verdicts do not rest on CUDA kernels): the rest
        // cannot change a PASS. A GPU with none has the whole section read, for the FAIL to name all.
        auto enough = [&](const std::vector<kernels::Image>& images) {
          return std::all_of(gpus.begin(), gpus.end(), [&](const auto& t) {
            return !t.gpu.gfx.empty() || std::any_of(images.begin(), images.end(), [&](const kernels::Image& i) {
              return code_verdict::cubin_runs_on(i, t.gpu);
            });
          });
        };
        listing.library = kernels::list_kernels(object, true, enough, {}, &budget, listing.library.spent);
      }
    } catch (const Error&) {}
    // Still nothing runs on an NVIDIA GPU: are its cubins empty modules (the headers do not say; the cubins'
    // section tables do)? Only where that can change a verdict: a library that registers PTX (or entries of
    // another kind) carries kernels whatever its cubins hold, and the count ends at the first cubin with
    // kernels. An AMD verdict does not rest on cubins.
    settled = true;
    for (const auto& t : gpus)
      settled &= !t.gpu.gfx.empty() || code_verdict::judge(listing.library, t.gpu, driver_cuda).status != Status::fail;
    if (!settled && kernels::empty_modules_can_decide(listing.library))
      kernels::count_cubin_kernels(
          listing.library, [](const kernels::Image& i) { return !i.relocatable; }, &budget, true);
  };
  // I/O bound (scattered small reads): more threads than cores pays on a cold page cache.
  auto listings = kernels::list_all(collected.objects, 16, settle, &budget);
  util::log::debug("host", [&] { return "kernels: listed at " + since() + " ms"; });
  const auto& gpus = known.get().gpus;
  const int driver_cuda = known.get().driver_cuda;
  for (auto& listing : listings) {
    const auto& object = listing.library.path;
    if (!listing.error.empty()) {
      unreadable.push_back(listing.error);
      continue;
    }
    const auto& lib = listing.library;
    std::size_t empty_modules = 0;
    for (const auto& i : lib.images) empty_modules += i.kernel_count == std::size_t(0);
    if (!lib.has_device_code() && lib.problems.empty() && lib.other.empty()) continue;
    ++with_code;
    images += lib.images.size();
    Result r{.name = "kernels " + object.string(), .status = Status::info, .rule = Rule::kernel_image};
    nlohmann::json ptx = nlohmann::json::array(), sections = nlohmann::json::array();
    std::map<std::string, std::string> isa_of;
    std::size_t compressed = 0;
    std::size_t relocatable = 0, embedded = 0;
    for (const auto& i : lib.images) {
      compressed += i.compressed;
      relocatable += i.relocatable;
      embedded += i.embedded;
      if (i.kind == kernels::Kind::ptx && kernels::origin_of(i) == kernels::Origin::registered)
        isa_of.emplace(i.target, i.ptx_isa);
      if (std::find(sections.begin(), sections.end(), i.section) == sections.end()) sections.push_back(i.section);
    }
    for (const auto& t : kernels::distinct_targets(lib, kernels::Kind::ptx))
      ptx.push_back({{"target", t}, {"isa", isa_of[t]}});
    const auto cubins = kernels::distinct_targets(lib, kernels::Kind::cubin);
    const auto objects = kernels::distinct_targets(lib, kernels::Kind::code_object);
    nlohmann::json other = nlohmann::json::array();
    for (const auto& o : lib.other)
      other.push_back({{"kind", o.kind}, {"arch", "sm_" + std::to_string(o.arch)}, {"count", o.count}});
    using kernels::Origin;
    const auto reloc_cubins = kernels::distinct_targets(lib, kernels::Kind::cubin, Origin::relocatable);
    const auto reloc_ptx = kernels::distinct_targets(lib, kernels::Kind::ptx, Origin::relocatable);
    const auto kept_cubins = kernels::distinct_targets(lib, kernels::Kind::cubin, Origin::embedded);
    const auto kept_ptx = kernels::distinct_targets(lib, kernels::Kind::ptx, Origin::embedded);
    r.data = {{"path", object.string()},
              {"cubins", cubins},
              {"ptx", ptx},
              {"code_objects", objects},
              {"images", lib.images.size() - relocatable - embedded},
              {"compressed", compressed},
              {"sections", sections},
              {"relocatable", {{"images", relocatable}, {"cubins", reloc_cubins}, {"ptx", reloc_ptx}}},
              {"kept_as_data",
               {{"images", embedded},
                {"cubins", kept_cubins},
                {"ptx", kept_ptx},
                {"read_in_part", lib.kept_as_data_in_part}}},
              {"other_entries", other},
              {"empty_modules", empty_modules},
              {"decompressed_bytes", lib.spent.inflated},
              {"problems", lib.problems},
              {"gpus", nlohmann::json::array()}};
    std::string carries;
    auto add = [&](const std::string& what, const std::vector<std::string>& list) {
      if (list.empty()) return;
      std::string l;
      for (const auto& s : list) l += (l.empty() ? "" : " ") + s;
      carries += util::concat({carries.empty() ? "" : ", ", what, " ", l});
    };
    add("cubins", cubins);
    std::vector<std::string> ptx_text;
    for (const auto& p : ptx)
      ptx_text.push_back(p["target"].get<std::string>() + " (ISA " + p["isa"].get<std::string>() + ")");
    add("PTX", ptx_text);
    add("code objects", objects);
    if (relocatable) {
      auto both = reloc_cubins;
      both.insert(both.end(), reloc_ptx.begin(), reloc_ptx.end());
      add("relocatable (__nv_relfatbin, not loaded as it is)", both);
    }
    if (embedded) {
      auto both = kept_cubins;
      both.insert(both.end(), kept_ptx.begin(), kept_ptx.end());
      carries += (carries.empty() ? "" : ", ") + std::to_string(embedded) +
                 " more kept as data (.ldata, loaded by the library itself): ";
      for (std::size_t k = 0; k < both.size(); ++k) carries += (k ? " " : "") + both[k];
      if (lib.kept_as_data_in_part)
        carries += " (looked at in windows until each GPU had a cubin that runs; the rest left unread)";
    }
    std::size_t others = 0;
    for (const auto& o : lib.other) others += o.count;
    if (others) carries += (carries.empty() ? "" : ", ") + std::to_string(others) + " entries neither cubin nor PTX";
    r.reason = std::to_string(lib.images.size() - relocatable - embedded) +
               " images: " + (carries.empty() ? "none readable" : carries);
    for (const auto& t : gpus) {
      auto v = code_verdict::judge(lib, t.gpu, driver_cuda);
      r.data["gpus"].push_back({{"gpu", t.gpu.label},
                                {"indices", t.indices},
                                {"status", check::status_word(v.status)},
                                {"via", v.via},
                                {"reason", v.reason}});
      if (v.status == Status::info) continue;
      r.reason += "; " + v.reason;
      if (severity(v.status) > severity(r.status)) {
        r.status = v.status;
        if (v.status == Status::fail) r.fix = fix_for(lib, t.gpu, v.reason);
      }
    }
    if (!lib.problems.empty()) {
      r.reason += "; could not read all of it: " + lib.problems.front();
      if (severity(r.status) < severity(Status::warn)) r.status = Status::warn;
    }
    rows.push_back(std::move(r));
  }
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::string where = std::to_string(collected.objects.size()) + " objects read, " + std::to_string(with_code) +
                      " with GPU kernels (" + std::to_string(images) + " images)";
  if (gpus.empty()) where += "; no GPU to judge them against (listed only)";
  // A set with no GPU code at all (a CPU-only torch) would otherwise pass every per-GPU verdict vacuously.
  const bool vacuous = with_code == 0 && !req.allow_no_gpu_code;
  if (vacuous)
    where += "; none of them carries GPU code, so the engine would find no kernel for any GPU (a CPU-only build?)";
  out.push_back({.name = "kernels",
                 .status = vacuous ? Status::fail : Status::info,
                 .rule = vacuous ? Rule::kernel_image : Rule::none,
                 .reason = where,
                 .fix = vacuous ? "install the engine's GPU build (e.g. torch from its CUDA or ROCm wheel index)" : "",
                 .data = {{"objects", collected.objects.size()},
                          {"with_device_code", with_code},
                          {"images", images},
                          {"milliseconds", ms},
                          {"unreadable", unreadable}},
                 .hint = vacuous ? Hint::allow_no_gpu_code : Hint::none});
  for (auto& r : rows) out.push_back(std::move(r));
}

}  // namespace provkit::host::detail
