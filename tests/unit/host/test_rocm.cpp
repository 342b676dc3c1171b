// host/rocm: the KFD topology's GPUs, their target ids (xnack/sramecc modes),
// selectors, and whether code built for a target id loads on them.
#include <catch2/catch.hpp>

#include "host/rocm.hpp"
#include "support/temp_dir.hpp"

using namespace provkit::host;
using provkit::test::TempDir;

namespace {

rocm::AmdGpu amd_gpu(const std::string& gfx, std::optional<bool> sramecc, std::optional<bool> xnack) {
  rocm::AmdGpu g;
  g.gfx_target = gfx;
  g.sramecc = sramecc;
  g.xnack = xnack;
  return g;
}

}  // namespace

TEST_CASE("rocm: a GPU's target id names the modes it runs in", "[rocm]") {
  CHECK(amd_gpu("gfx90a", true, false).target_id() == "gfx90a:sramecc+:xnack-");
  CHECK(amd_gpu("gfx1100", std::nullopt, std::nullopt).target_id() == "gfx1100");
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

TEST_CASE("rocm: KFD's per-process VRAM files give each GPU its processes", "[rocm]") {
  TempDir dir;
  dir.write("class/kfd/kfd/topology/nodes/1/properties", "gfx_target_version 90402\n");
  dir.write("class/kfd/kfd/topology/nodes/1/gpu_id", "41234\n");
  dir.write("class/kfd/kfd/topology/nodes/2/properties", "gfx_target_version 110000\n");
  dir.write("class/kfd/kfd/topology/nodes/2/gpu_id", "777\n");
  dir.write("class/kfd/kfd/proc/4242/vram_41234", "21474836480\n");  // on node 1 only
  dir.write("class/kfd/kfd/proc/17/vram_41234", "1048576\n");
  dir.write("class/kfd/kfd/proc/17/vram_777", "0\n");  // opened node 2, holds nothing yet
  dir.write("class/kfd/kfd/proc/not-a-pid/vram_777", "5\n");
  dir.write("class/kfd/kfd/proc/99/vram_777", "many\n");  // unreadable: no seat
  auto gpus = rocm::read_kfd_topology(dir.path);
  REQUIRE(gpus.size() == 2);
  REQUIRE(gpus[0].processes.size() == 2);
  CHECK(gpus[0].processes[0].pid == 17);
  CHECK(gpus[0].processes[0].memory == std::optional<std::uint64_t>(1048576));
  CHECK(gpus[0].processes[1].pid == 4242);
  CHECK(gpus[0].processes[1].memory == std::optional<std::uint64_t>(21474836480ull));
  CHECK(gpus[0].processes[1].compute);
  REQUIRE(gpus[1].processes.size() == 1);
  CHECK(gpus[1].processes[0].pid == 17);
}
