// gpucode/amd_target: whether code built for an LLVM target id loads on a processor in the modes it runs in.
#include <catch2/catch.hpp>

#include "provkit/gpucode/amd_target.hpp"

using namespace provkit;

namespace {

gpucode::AmdProcessor gpu(const std::string& gfx, std::optional<bool> sramecc, std::optional<bool> xnack) {
  return {gfx, sramecc, xnack};
}

}  // namespace

TEST_CASE("gpucode: a target id's features must match the GPU's modes", "[gpucode]") {
  using V = gpucode::TargetMatch::Verdict;
  const auto off = gpu("gfx90a", false, false);
  CHECK(gpucode::match_target("gfx90a", off).verdict == V::loads);  // no feature: either mode
  CHECK(gpucode::match_target("gfx90a:xnack-", off).verdict == V::loads);
  auto m = gpucode::match_target("gfx90a:xnack+", off);
  CHECK(m.verdict == V::wrong_mode);
  CHECK(m.why.find("xnack+ code on a GPU running xnack-") != std::string::npos);
  CHECK(gpucode::match_target("gfx90a:sramecc+:xnack-", off).verdict == V::wrong_mode);
  CHECK(gpucode::match_target("gfx90a:sramecc+:xnack-", gpu("gfx90a", true, false)).verdict == V::loads);
  CHECK(gpucode::match_target("gfx942:xnack-", off).verdict == V::wrong_processor);
  CHECK(gpucode::match_target("gfx9-4-generic:xnack+", gpu("gfx942", true, true)).verdict == V::loads);
  // A mode that cannot be told, and a feature the processor does not have.
  CHECK(gpucode::match_target("gfx90a:xnack+", gpu("gfx90a", false, std::nullopt)).verdict == V::unknown_mode);
  CHECK(gpucode::match_target("gfx1100:xnack-", gpu("gfx1100", std::nullopt, std::nullopt)).verdict == V::wrong_mode);
}

TEST_CASE("gpucode: code objects run on their processor, generic ones on their family", "[gpucode]") {
  CHECK(gpucode::code_object_runs_on("gfx11-generic", "gfx1151"));
  CHECK(gpucode::code_object_runs_on("gfx1201", "gfx1201"));
  CHECK_FALSE(gpucode::code_object_runs_on("gfx1200", "gfx1201"));
  CHECK_FALSE(gpucode::code_object_runs_on("gfx11-generic", "gfx1201"));
  CHECK(gpucode::has_xnack("gfx90a"));
  CHECK_FALSE(gpucode::has_xnack("gfx1100"));
  CHECK(gpucode::has_sramecc("gfx942"));
  CHECK_FALSE(gpucode::has_sramecc("gfx1201"));
}
