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
  CHECK(gpu::cuda_visibility(d, std::string("0,0,1")).indices == std::vector<int>{0, 1});
}

namespace {

// GPU 2 in MIG mode with two instances.
std::vector<gpu::Device> with_migs() {
  auto d = four();
  d[2].mig_mode = 1;
  d[2].migs = {{"MIG-11111111-aaaa-bbbb-cccc-000000000001", "MIG 1g.10gb", 7, 0, 10u << 30, 9u << 30},
               {"MIG-22222222-aaaa-bbbb-cccc-000000000002", "MIG 3g.40gb", 2, 0, 40u << 30, 39u << 30}};
  return d;
}

}  // namespace

TEST_CASE("gpu: a MIG id makes its parent GPU visible, through that instance", "[gpu][visibility][mig]") {
  const auto d = with_migs();
  auto v = gpu::cuda_visibility(d, std::string("MIG-22222222-aaaa-bbbb-cccc-000000000002"));
  CHECK(v.indices == std::vector<int>{2});
  REQUIRE(v.migs_of(2).size() == 1);
  CHECK(v.migs_of(2)[0]->instance.gpu_instance == 2);
  CHECK(v.migs_of(0).empty());
  // The older form: the parent's UUID, then the GPU and compute instance ids.
  auto legacy = gpu::cuda_visibility(d, std::string("MIG-GPU-cccccccc-1111-2222-3333-444455556666/7/0"));
  CHECK(legacy.indices == std::vector<int>{2});
  REQUIRE(legacy.migs.size() == 1);
  CHECK(legacy.migs[0].instance.name == "MIG 1g.10gb");
  // A unique prefix, as for GPU UUIDs.
  CHECK(gpu::cuda_visibility(d, std::string("MIG-11111111")).indices == std::vector<int>{2});
  // Beside whole GPUs, in the variable's order.
  CHECK(gpu::cuda_visibility(d, std::string("1,MIG-11111111-aaaa-bbbb-cccc-000000000001,0")).indices ==
        std::vector<int>{1, 2, 0});
}

TEST_CASE("gpu: an unknown MIG id is set aside and hides nothing else", "[gpu][visibility][mig]") {
  const auto d = with_migs();
  auto v = gpu::cuda_visibility(d, std::string("0,MIG-deadbeef-0000-1111-2222-333344445555,1"));
  CHECK(v.indices == std::vector<int>{0, 1});
  CHECK(v.unknown_migs == std::vector<std::string>{"MIG-deadbeef-0000-1111-2222-333344445555"});
  CHECK(v.ignored.empty());
  // Legacy ids the GPU has no instance for, or malformed ones, are unknown too.
  auto legacy = gpu::cuda_visibility(d, std::string("MIG-GPU-cccccccc-1111-2222-3333-444455556666/9/9,MIG-GPU-x"));
  CHECK(legacy.indices.empty());
  CHECK(legacy.unknown_migs.size() == 2);
  // A GPU without MIG instances (MIG off, or an older driver) has none to name.
  CHECK(gpu::cuda_visibility(four(), std::string("MIG-11111111-aaaa-bbbb-cccc-000000000001")).unknown_migs.size() == 1);
}
