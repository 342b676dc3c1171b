// CUDA_VISIBLE_DEVICES as the CUDA runtime reads it (host/gpu: cuda_visibility).
#include <catch2/catch.hpp>

#include "provkit/host/gpu.hpp"

using namespace provkit::host;

namespace {

std::vector<gpu::Device> four() {
  std::vector<gpu::Device> d(4);
  for (int i = 0; i < 4; ++i) {
    d[i].index = i;
    d[i].uuid = "GPU-" + std::string(8, static_cast<char>('a' + i)) + "-1111-2222-3333-444455556666";
  }
  return d;
}

}  // namespace

TEST_CASE("gpu: CUDA_VISIBLE_DEVICES unset, indices, UUIDs, empty", "[gpu][visibility]") {
  const auto d = four();
  auto unset = gpu::cuda_visibility(d, std::nullopt);
  CHECK_FALSE(unset.restricted);
  CHECK(unset.visible(3));
  auto some = gpu::cuda_visibility(d, std::string("2, 0"));
  CHECK(some.indices == std::vector<int>{2, 0});  // the engine's order: its device 0 is GPU 2
  CHECK_FALSE(some.visible(1));
  CHECK(gpu::cuda_visibility(d, std::string("GPU-cccccccc,GPU-aaaaaaaa-1111-2222-3333-444455556666")).indices ==
        std::vector<int>{2, 0});
  auto none = gpu::cuda_visibility(d, std::string(""));
  CHECK(none.restricted);
  CHECK(none.indices.empty());
  CHECK_FALSE(none.visible(0));
}

TEST_CASE("gpu: CUDA_VISIBLE_DEVICES ends at the first entry that names no GPU", "[gpu][visibility]") {
  const auto d = four();
  auto v = gpu::cuda_visibility(d, std::string("1,9,3"));
  CHECK(v.indices == std::vector<int>{1});
  CHECK(v.ignored == std::vector<std::string>{"9", "3"});
  auto mig = gpu::cuda_visibility(d, std::string("MIG-4c5b3f0e-aaaa-bbbb-cccc-000000000000"));
  CHECK(mig.indices.empty());
  CHECK(mig.ignored.size() == 1);
  CHECK(gpu::cuda_visibility(d, std::string("0,0,1")).indices == std::vector<int>{0, 1});
}
