// host/link_test: the theoretical bandwidth of a link, and a missing driver
// reported in the report (the copies themselves: tests/integration/envcheck/test_links.py).
#include <catch2/catch.hpp>

#include "provkit/host/link_test.hpp"

using namespace provkit;

TEST_CASE("theoretical PCIe bandwidth per direction, with the line encoding", "[host][link]") {
  CHECK(host::pcie_gb_per_s({1, 1}) == Approx(0.25));      // 2.5 GT/s, 8b/10b
  CHECK(host::pcie_gb_per_s({2, 16}) == Approx(8.0));      // 5 GT/s, 8b/10b
  CHECK(host::pcie_gb_per_s({3, 4}) == Approx(3.938).epsilon(0.001));   // 8 GT/s, 128b/130b
  CHECK(host::pcie_gb_per_s({4, 16}) == Approx(31.51).epsilon(0.001));
  CHECK(host::pcie_gb_per_s({5, 16}) == Approx(63.02).epsilon(0.001));
  CHECK(host::pcie_gb_per_s({-1, 16}) == 0);
  CHECK(host::pcie_gb_per_s({9, 16}) == 0);
}

TEST_CASE("a libcuda that cannot be opened is the report's error, not an exception", "[host][link]") {
  auto report = host::run_link_test({.cuda_library = "/nonexistent/libcuda.so.1", .nvml_library = "/nonexistent/nvml.so"});
  CHECK(report.gpus.empty());
  CHECK_THAT(report.error, Catch::Contains("/nonexistent/libcuda.so.1") && Catch::Contains("cannot open"));
}
