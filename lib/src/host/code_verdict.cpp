#include "code_verdict.hpp"

#include <algorithm>
#include <vector>

#include "provkit/gpucode/amd_target.hpp"

namespace provkit::host::code_verdict {

using kernels::distinct_targets;
using kernels::Image;
using kernels::Kind;
using kernels::Library;
using kernels::Origin;

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

namespace {

// Does this cubin or PTX run on `cc`? The rules of gpucode::runs_on, with
// family ('f') PTX kept within its family.
bool cuda_runs(const Image& i, gpucode::Version cc) {
  if (i.arch.ptx && i.arch.variant == 'f') return i.arch.arch.major == cc.major && i.arch.arch.minor <= cc.minor;
  return gpucode::runs_on(i.arch, cc);
}

}  // namespace

bool cubin_runs_on(const Image& image, const Gpu& gpu) {
  return image.kind == Kind::cubin && !image.relocatable && gpu.cc && gpucode::runs_on(image.arch, *gpu.cc);
}

namespace {

std::string carries_text(const Library& lib, bool amd) {
  std::vector<std::string> parts;
  if (amd) {
    auto objects = distinct_targets(lib, Kind::code_object);
    if (!objects.empty()) parts.push_back("code objects for " + join(objects));
  } else {
    auto cubins = distinct_targets(lib, Kind::cubin), ptx = distinct_targets(lib, Kind::ptx);
    if (!cubins.empty()) parts.push_back("cubins " + join(cubins));
    if (!ptx.empty()) parts.push_back("PTX " + join(ptx));
    auto kept_cubins = distinct_targets(lib, Kind::cubin, Origin::embedded),
         kept_ptx = distinct_targets(lib, Kind::ptx, Origin::embedded);
    if (!kept_cubins.empty()) parts.push_back("kept as data cubins " + join(kept_cubins));
    if (!kept_ptx.empty()) parts.push_back("kept as data PTX " + join(kept_ptx));
    if (cubins.empty() && ptx.empty() && !distinct_targets(lib, Kind::cubin, Origin::relocatable).empty())
      parts.push_back("only relocatable device code (__nv_relfatbin) " +
                      join(distinct_targets(lib, Kind::cubin, Origin::relocatable)));
  }
  return parts.empty() ? "nothing for this vendor's GPUs" : join(parts, " and ");
}

// The code object that loads on an AMD GPU: one whose processor is the GPU's
// and whose features (xnack, sramecc) its modes allow; else the closest miss.
Verdict judge_amd(const Library& lib, const Gpu& gpu) {
  Verdict v;
  const gpucode::AmdProcessor device{gpu.gfx, gpu.sramecc, gpu.xnack};
  const Image* unknown = nullptr;
  std::string unknown_why, wrong_why;
  for (const auto& i : lib.images) {
    if (i.kind != Kind::code_object) continue;
    const auto m = gpucode::match_target(i.target, device);
    using M = gpucode::TargetMatch::Verdict;
    if (m.verdict == M::loads) {
      v.status = check::Status::pass;
      v.via = i.target;
      v.reason = "runs its " + i.target + " code object on " + gpu.label;
      return v;
    }
    if (m.verdict == M::unknown_mode && !unknown) unknown = &i, unknown_why = m.why;
    if (m.verdict == M::wrong_mode && wrong_why.empty()) wrong_why = i.target + ": " + m.why;
  }
  if (unknown) {
    v.status = check::Status::warn;
    v.via = unknown->target;
    v.reason = "only " + unknown->target + " is for " + gpu.label +
               "'s processor, and it loads only in the mode it names: " + unknown_why;
    return v;
  }
  v.status = check::Status::fail;
  v.reason = "nothing in it runs on " + gpu.label + ": it carries " + carries_text(lib, true);
  if (!wrong_why.empty()) v.reason += " (" + wrong_why + ")";
  return v;
}

}  // namespace

Verdict judge(const Library& lib, const Gpu& gpu, int driver_cuda) {
  Verdict v;
  const bool amd = !gpu.gfx.empty();
  bool carries = !amd && !lib.other.empty();
  std::size_t empty_modules = 0;
  for (const auto& i : lib.images) {
    if (!amd && i.kind == Kind::cubin && i.kernel_count == std::size_t(0)) {
      empty_modules += !i.relocatable;
      continue;  // an empty module: no kernel in it needs a GPU
    }
    carries |= amd ? i.kind == Kind::code_object : (i.kind != Kind::code_object && !i.relocatable);
  }
  if (!carries && empty_modules) {
    v.status = check::Status::pass;
    v.via = "no kernels";
    v.reason = "carries no kernels for " + gpu.label + " to run: its " + std::to_string(empty_modules) + " cubin" +
               (empty_modules > 1 ? "s are empty modules" : " is an empty module") + " (no .text sections)";
    return v;
  }
  if (!carries) {
    v.reason = "carries no " + std::string(amd ? "AMD" : "CUDA") + " kernels";
    return v;
  }
  if (amd) return judge_amd(lib, gpu);
  if (!gpu.cc) {
    v.reason = "the compute capability of " + gpu.label + " is unknown";
    return v;
  }
  const Image* best_cubin = nullptr;
  const Image* best_ptx = nullptr;
  const Image* too_new_ptx = nullptr;
  const auto driver = gpucode::from_cuda_int(driver_cuda);
  for (const auto& i : lib.images) {
    if (i.kind == Kind::code_object || i.relocatable || i.kernel_count == std::size_t(0) || !cuda_runs(i, *gpu.cc))
      continue;
    if (i.kind == Kind::cubin) {
      if (!best_cubin || i.arch.arch > best_cubin->arch.arch) best_cubin = &i;
      continue;
    }
    auto needs = gpucode::cuda_for_ptx_isa(i.ptx_isa);
    if (driver_cuda && needs && driver < *needs) {
      if (!too_new_ptx) too_new_ptx = &i;
      continue;
    }
    if (!best_ptx || i.arch.arch > best_ptx->arch.arch) best_ptx = &i;
  }
  if (best_cubin) {
    v.status = check::Status::pass;
    v.via = best_cubin->target;
    v.reason = "runs its " + best_cubin->target + " cubins on " + gpu.label;
    return v;
  }
  if (best_ptx) {
    auto needs = gpucode::cuda_for_ptx_isa(best_ptx->ptx_isa);
    v.status = check::Status::warn;
    v.via = best_ptx->target + " (PTX ISA " + best_ptx->ptx_isa + ")";
    v.reason = "only PTX runs on " + gpu.label + ": " + best_ptx->target + " (ISA " + best_ptx->ptx_isa +
               (needs ? ", which needs a driver for CUDA " + needs->str() + " or newer" : "") +
               (driver_cuda ? "; this driver supports CUDA " + driver.str() : "") +
               ") is JIT-compiled by the driver at first start";
    return v;
  }
  // Entries of a kind neither cuobjdump nor this reader knows, built for this
  // GPU's major: what they are is unknown, so this is no proof of failure.
  std::size_t unknown = 0;
  int unknown_kind = 0;
  for (const auto& o : lib.other)
    if (o.arch / 10 == gpu.cc->major && o.arch % 10 <= gpu.cc->minor) unknown += o.count, unknown_kind = o.kind;
  if (unknown) {
    v.status = check::Status::warn;
    v.via = "kind " + std::to_string(unknown_kind);
    v.reason = "no cubin or PTX in it runs on " + gpu.label + " (it carries " + carries_text(lib, false) + "), but " +
               std::to_string(unknown) + " fatbin entries of kind " + std::to_string(unknown_kind) +
               " (neither cubin nor PTX: cuobjdump does not list them) are built for sm_" +
               std::to_string(gpu.cc->major) + "X";
    return v;
  }
  v.status = check::Status::fail;
  v.reason = "nothing in it runs on " + gpu.label + ": it carries " + carries_text(lib, false);
  if (too_new_ptx) {
    auto needs = gpucode::cuda_for_ptx_isa(too_new_ptx->ptx_isa);
    v.reason += "; its " + too_new_ptx->target + " PTX (ISA " + too_new_ptx->ptx_isa + ") needs a driver for CUDA " +
                (needs ? needs->str() : "?") + ", this one supports " + driver.str();
  }
  return v;
}

}  // namespace provkit::host::code_verdict
