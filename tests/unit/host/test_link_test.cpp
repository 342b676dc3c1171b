// host/link_test: the theoretical bandwidth of a link, and a missing driver
// reported in the report (the copies themselves: tests/integration/envcheck/test_links.py).
#include <catch2/catch.hpp>

#include "provkit/host/envcheck.hpp"
#include "provkit/host/link_test.hpp"

using namespace provkit;

TEST_CASE("theoretical PCIe bandwidth per direction, with the line encoding", "[host][link]") {
  CHECK(host::pcie_gb_per_s({1, 1}) == Approx(0.25));                  // 2.5 GT/s, 8b/10b
  CHECK(host::pcie_gb_per_s({2, 16}) == Approx(8.0));                  // 5 GT/s, 8b/10b
  CHECK(host::pcie_gb_per_s({3, 4}) == Approx(3.938).epsilon(0.001));  // 8 GT/s, 128b/130b
  CHECK(host::pcie_gb_per_s({4, 16}) == Approx(31.51).epsilon(0.001));
  CHECK(host::pcie_gb_per_s({5, 16}) == Approx(63.02).epsilon(0.001));
  CHECK(host::pcie_gb_per_s({-1, 16}) == 0);
  CHECK(host::pcie_gb_per_s({9, 16}) == 0);
}

TEST_CASE("a libcuda that cannot be opened is the report's error, not an exception", "[host][link]") {
  auto report = host::run_link_test(
      {.cuda_library = "/nonexistent/libcuda.so.1", .nvml_library = "/nonexistent/nvml.so"});
  CHECK(report.gpus.empty());
  CHECK_THAT(report.error, Catch::Contains("/nonexistent/libcuda.so.1") && Catch::Contains("cannot open"));
}

TEST_CASE("profile keys of the links", "[host][link][envcheck]") {
  host::Request r;
  host::parse_profile("link_test: true\nmin_pcie: \"4:16\"\nmin_h2d: 20.5\npcie_atomics: true\nroce: mlx5_0\n",
                      "p.yaml", r);
  CHECK(r.link_test == 1.0);
  REQUIRE(r.min_pcie);
  CHECK((r.min_pcie->gen == 4 && r.min_pcie->width == 16));
  CHECK(r.min_h2d == 20.5);
  CHECK(r.pcie_atomics);
  CHECK(r.roce == "mlx5_0");
  CHECK(r.asks_anything());
  host::Request only_link;
  host::parse_profile("link_test: 0.25\nroce: false\n", "p.yaml", only_link);
  CHECK(only_link.link_test == 0.25);
  CHECK_FALSE(only_link.roce);
  CHECK_FALSE(only_link.asks_anything());  // --link-test alone: the inventory with measurements
  CHECK(only_link.wants_link_test());
  host::Request bad;
  CHECK_THROWS_WITH(host::parse_profile("min_h2d: fast\n", "p.yaml", bad),
                    "p.yaml:1: 'min_h2d' wants a bandwidth in GB/s (like 20), not 'fast'");
  CHECK_THROWS_WITH(host::parse_profile("link_test: 61\n", "p.yaml", bad),
                    Catch::Contains("p.yaml:1: 'link_test' wants seconds"));
}
