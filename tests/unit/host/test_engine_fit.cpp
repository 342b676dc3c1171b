// host::engine_fit: this box's cards as the fit planner takes them.
#include <catch2/catch.hpp>

#include "provkit/host/engine_fit.hpp"

using namespace provkit;
using namespace provkit::host;

TEST_CASE("engine_fit: each card's total and free memory, its name, in the engine's order", "[engine_fit]") {
  gpu::Device a, b;
  a.index = 0;
  a.name = "NVIDIA GeForce RTX 5090";
  a.memory_total = 32ull << 30;
  a.memory_free = 31ull << 30;
  b.index = 1;
  b.name = "NVIDIA GeForce RTX 3090";
  b.memory_total = 24ull << 30;
  b.memory_free = 12ull << 30;  // another process holds half
  auto cards = fit_gpus({b, a});
  REQUIRE(cards.size() == 2);
  CHECK(cards[0].total == 24ull << 30);
  CHECK(cards[0].free == 12ull << 30);
  CHECK(cards[0].name == "NVIDIA GeForce RTX 3090");
  CHECK(cards[0].source == fit::GpuSource::local);
  CHECK(cards[1].free == 31ull << 30);
  // A driver that reports more free than total (a reading taken between two changes): never more than the card.
  a.memory_free = 40ull << 30;
  CHECK(fit_gpus({a})[0].free == 32ull << 30);
  // A card whose memory the driver does not say is refused, never planned as empty or full.
  b.memory_free.reset();
  CHECK_THROWS_WITH(fit_gpus({b}), Catch::Contains("GPU 1 (NVIDIA GeForce RTX 3090): the driver does not say"));
  CHECK(fit_gpus({}).empty());
}

TEST_CASE("engine_fit: no driver, no cards, and why", "[engine_fit]") {
  gpu::ProbeOptions o;
  o.nvml_library = "/nonexistent/provkit-test/libnvidia-ml.so.1";
  o.cuda_library = "/nonexistent/provkit-test/libcuda.so.1";
  o.nvidia_smi = "/nonexistent/provkit-test/nvidia-smi";
  auto l = local_gpus(o, std::nullopt);
  CHECK(l.devices.empty());
  CHECK_THAT(l.none_why, Catch::StartsWith("no NVIDIA driver found: "));
  CHECK_FALSE(l.cuda_visible_devices);
}
