// host/rocm: the KFD topology's GPUs, their target ids (xnack/sramecc modes),
// selectors, and whether code built for a target id loads on them.
#include <catch2/catch.hpp>

#include "host/rocm.hpp"
#include "support/temp_dir.hpp"

using namespace provkit::host;
using provkit::test::TempDir;

namespace {

rocm::AmdGpu gpu(const std::string& gfx, std::optional<bool> sramecc, std::optional<bool> xnack) {
  rocm::AmdGpu g;
  g.gfx_target = gfx;
  g.sramecc = sramecc;
  g.xnack = xnack;
  return g;
}

}  // namespace

TEST_CASE("rocm: a GPU's target id names the modes it runs in", "[rocm]") {
  CHECK(gpu("gfx90a", true, false).target_id() == "gfx90a:sramecc+:xnack-");
  CHECK(gpu("gfx1100", std::nullopt, std::nullopt).target_id() == "gfx1100");
}

TEST_CASE("rocm: the XNACK mode a process gets", "[rocm]") {
  using In = rocm::XnackInputs;
  CHECK(rocm::xnack_mode("gfx1100", In{}) == std::nullopt);            // no XNACK at all
  CHECK(rocm::xnack_mode("gfx90a", In{}) == false);                    // noretry's default on Aldebaran: retry off
  CHECK(rocm::xnack_mode("gfx90a", In{std::nullopt, 0}) == true);      // retry on: XNACK on by default
  CHECK(rocm::xnack_mode("gfx942", In{std::string("1"), 1}) == true);  // chosen per process
  CHECK(rocm::xnack_mode("gfx942", In{std::string("0"), 0}) == false);
  CHECK(rocm::xnack_mode("gfx908", In{std::string("1"), 1}) == false);  // not per process: the boot setting
  CHECK(rocm::xnack_mode("gfx1010", In{}) == std::nullopt);             // a default not modelled
}

TEST_CASE("rocm: KFD nodes give UUID, bus id and modes; selectors by index and UUID", "[rocm]") {
  TempDir dir;
  auto nodes = std::string("class/kfd/kfd/topology/nodes/");
  dir.write(nodes + "0/properties", "cpu_cores_count 64\ngfx_target_version 0\n");
  dir.write(nodes + "1/properties",
            "gfx_target_version 90010\nunique_id 1311768467294899695\ncapability 67117056\nlocation_id 49408\n"
            "domain 1\ndrm_render_minor 128\n");
  dir.write(nodes + "2/properties", "gfx_target_version 90402\nunique_id 42\n");
  dir.write("class/drm/renderD128/device/product_name", "AMD Instinct MI210\n");
  dir.write("module/amdgpu/parameters/noretry", "0\n");
  auto gpus = rocm::read_kfd_topology(dir.path);
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].uuid() == "GPU-1234567890abcdef");
  CHECK(gpus[0].pci_bus_id == "0001:c1:00.0");
  CHECK(gpus[0].product_name == "AMD Instinct MI210");
  CHECK(gpus[0].target_id() == "gfx90a:sramecc+:xnack+");  // capability has SRAM_EDCSupport; noretry=0
  CHECK(gpus[1].target_id() == "gfx942:xnack+");           // no capability line: SRAM ECC unknown
  CHECK(rocm::read_kfd_topology(dir.path, std::string("0"))[0].target_id() == "gfx90a:sramecc+:xnack-");
  CHECK(rocm::select_amd_gpu(gpus, "1") == &gpus[1]);
  CHECK(rocm::select_amd_gpu(gpus, "2") == nullptr);
  CHECK(rocm::select_amd_gpu(gpus, "GPU-1234567890AB") == &gpus[0]);  // a prefix, any case
  CHECK(rocm::select_amd_gpu(gpus, "GPU-000000000000002a") == &gpus[1]);
  CHECK(rocm::select_amd_gpu(gpus, "GPU-") == nullptr);
}
