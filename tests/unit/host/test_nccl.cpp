// host/nccl: the INFO log's transport lines, nccl-tests' figures, the message sizes, where the engine's
// libnccl.so.2 is found, and the profile keys (the measurement itself, against a stand-in libnccl and
// libcuda: tests/integration/envcheck/test_nccl.py).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "provkit/host/envcheck.hpp"
#include "provkit/host/nccl.hpp"

using namespace provkit;
namespace nccl = provkit::host::nccl;
namespace fs = std::filesystem;

TEST_CASE("NCCL's transport lines, in every spelling its versions write", "[host][nccl]") {
  const std::string log =
      "node1:4242:4250 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n"
      "node1:4242:4250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "node1:4242:4251 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n"
      "node1:4242:4250 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "node1:4242:4250 [0] NCCL INFO Channel 01 : 0[3000] -> 1[4000] via SHM/direct/direct\n"  // 2.1x: bus ids
      "node2:77:88 [0] NCCL INFO Channel 00/0 : 2[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
      "node2:77:88 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[1] via\n"          // no transport: skipped
      "node2:77:88 [0] NCCL INFO Channel 00/0 : x[0] -> 1[1] via P2P/IPC\n"  // no rank: skipped
      "node2:77:88 [0] NCCL INFO Connected all rings\n";
  const auto lines = nccl::parse_transport_log(log);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].channel == 0);
  CHECK(lines[0].from_rank == 0);
  CHECK(lines[0].to_rank == 1);
  CHECK(lines[0].from_device == "0");
  CHECK(lines[0].via == "P2P/CUMEM/read");
  CHECK(lines[0].kind() == "P2P");
  CHECK(lines[3].channel == 1);
  CHECK(lines[3].from_device == "3000");
  CHECK(lines[3].kind() == "SHM");
  CHECK(lines[4].from_rank == 2);
  CHECK(lines[4].via == "NET/IB/0/GDRDMA");
  CHECK(lines[4].kind() == "NET");

  const auto pairs = nccl::pair_transports(lines);
  REQUIRE(pairs.size() == 3);
  CHECK(pairs[0] == nccl::PairTransport{0, 1, {"P2P/CUMEM/read", "SHM/direct/direct"}});
  CHECK(pairs[1] == nccl::PairTransport{1, 0, {"P2P/CUMEM/read"}});
  CHECK(pairs[2] == nccl::PairTransport{2, 0, {"NET/IB/0/GDRDMA"}});

  CHECK(nccl::logged_setting(log, "NCCL_NVLS_ENABLE") == "0");
  CHECK_FALSE(nccl::logged_setting(log, "NCCL_P2P_DISABLE"));
  CHECK(nccl::parse_transport_log("").empty());
}

TEST_CASE("algorithm and bus bandwidth as nccl-tests computes them", "[host][nccl]") {
  // 80 MiB in 1 ms: 83.886 GB/s of algorithm bandwidth; over 2 ranks each link carries 2(n-1)/n = 1 of it,
  // over 4 ranks 1.5, over 8 ranks 1.75; one rank has no bus.
  const double alg = nccl::algorithm_bandwidth(80u << 20, 1e-3);
  CHECK(alg == Approx(83.886).epsilon(1e-4));
  CHECK(nccl::bus_bandwidth(alg, 2) == Approx(alg));
  CHECK(nccl::bus_bandwidth(alg, 4) == Approx(alg * 1.5));
  CHECK(nccl::bus_bandwidth(alg, 8) == Approx(alg * 1.75));
  CHECK(nccl::bus_bandwidth(alg, 1) == 0);
  CHECK(nccl::algorithm_bandwidth(1024, 0) == 0);
}

TEST_CASE("message sizes from one token's hidden state to a prefill", "[host][nccl]") {
  // 5120 x bf16 = 10 KiB per token; 1, 8, 64, 512, 4096 tokens, then 8192.
  CHECK(nccl::message_sizes(5120) == std::vector<std::uint64_t>{10240, 81920, 655360, 5242880, 41943040, 83886080});
  CHECK(nccl::message_sizes(64, 8) == std::vector<std::uint64_t>{128, 1024});
  CHECK(nccl::message_sizes(0).empty());
}

TEST_CASE("the engine's libnccl: given, then the wheel, then torch's, then the system's", "[host][nccl]") {
  const fs::path root = fs::temp_directory_path() / ("provkit-nccl-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path venv = root / "venv";
  const fs::path site = venv / "lib/python3.11/site-packages";
  auto touch = [](const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x";
  };
  fs::create_directories(venv / "bin");
  touch(root / "system/libnccl.so.2");
  touch(root / "given/libnccl.so.2");
  const fs::path system = root / "system/libnccl.so.2";

  // No Python environment's library: the system's.
  fs::create_directories(site);
  auto sp = nccl::site_packages_of(venv / "bin/python");
  REQUIRE(sp == std::vector<fs::path>{site});
  auto c = nccl::library_candidates(std::nullopt, sp, system);
  REQUIRE(c.size() == 1);
  CHECK(c[0].source == "system");

  // torch's own comes before the system's, the nvidia-nccl wheel's before torch's, a given path before all.
  touch(site / "torch/lib/libnccl.so.2");
  c = nccl::library_candidates(std::nullopt, sp, system);
  REQUIRE(c.size() == 2);
  CHECK(c[0].source == "torch");
  touch(site / "nvidia/nccl/lib/libnccl.so.2");
  c = nccl::library_candidates(std::nullopt, sp, system);
  REQUIRE(c.size() == 3);
  CHECK(c[0].source == "wheel");
  CHECK(c[0].path == site / "nvidia/nccl/lib/libnccl.so.2");
  c = nccl::library_candidates(root / "given/libnccl.so.2", sp, system);
  REQUIRE(c.size() == 4);
  CHECK(c[0].source == "given");
  // A given path that is no file is no candidate (the check says so rather than loading another).
  c = nccl::library_candidates(root / "nothing/libnccl.so.2", sp, std::nullopt);
  CHECK(c[0].source == "wheel");
  // A folder named libnccl.so.2 is not a library.
  fs::create_directories(root / "dir/libnccl.so.2");
  CHECK(nccl::library_candidates(root / "dir/libnccl.so.2", {}, std::nullopt).empty());
  fs::remove_all(root);
}

TEST_CASE("the child's settings: NVLink multicast off, NCCL's INFO log to a file of ours", "[host][nccl]") {
  const auto s = nccl::child_settings("/tmp/x/nccl.log");
  using Setting = std::pair<std::string, std::string>;
  CHECK(std::find(s.begin(), s.end(), Setting{"NCCL_NVLS_ENABLE", "0"}) != s.end());
  CHECK(std::find(s.begin(), s.end(), Setting{"NCCL_DEBUG", "INFO"}) != s.end());
  CHECK(std::find(s.begin(), s.end(), Setting{"NCCL_DEBUG_FILE", "/tmp/x/nccl.log"}) != s.end());
}

TEST_CASE("a measurement and the child's options survive their JSON", "[host][nccl]") {
  nccl::Measurement m{.error = "",
                      .call = "",
                      .version = 22105,
                      .library = "/v/libnccl.so.2",
                      .bus_ids = {"0000:03:00.0", "0000:05:00.0"},
                      .sizes = {{10240, 20, 12.5, 0.82, 0.82}}};
  auto back = nccl::measurement_from_json(nccl::to_json(m));
  CHECK(back.version == 22105);
  CHECK(back.bus_ids == m.bus_ids);
  REQUIRE(back.sizes.size() == 1);
  CHECK(back.sizes[0].latency_us == 12.5);
  nccl::WorkerOptions o{.nccl_library = "/l", .bus_ids = {"b"}, .sizes = {1, 2}, .warmup = 1, .iterations = 3};
  auto o2 = nccl::worker_options_from_json(nccl::to_json(o));
  CHECK(o2.sizes == o.sizes);
  CHECK(o2.iterations == 3);
  CHECK(o2.cuda_library == "libcuda.so.1");
}

TEST_CASE("a libnccl that cannot be opened is the measurement's error", "[host][nccl]") {
  auto m = nccl::measure({.nccl_library = "/nonexistent/libnccl.so.2"}, nullptr);
  CHECK(m.call == "dlopen");
  CHECK_THAT(m.error, Catch::Contains("/nonexistent/libnccl.so.2"));
}

TEST_CASE("profile keys and flags of the NCCL test", "[host][nccl][envcheck]") {
  host::Request r;
  host::parse_profile(
      "nccl_test: true\nnccl_lib: /opt/nccl/libnccl.so.2\nhidden_size: 8192\nlayers: 80\n"
      "min_busbw: 150\nmax_allreduce_us: 40\nnccl_timeout: 30\n",
      "p.yaml", r);
  CHECK(r.nccl_test);
  CHECK(r.nccl_lib == "/opt/nccl/libnccl.so.2");
  CHECK(r.hidden_size == 8192);
  CHECK(r.layers == 80);
  CHECK(r.min_busbw == 150);
  CHECK(r.max_allreduce_us == 40);
  CHECK(r.nccl_timeout == 30);
  CHECK(r.asks_anything());
  host::Request gate_only;
  host::set_nccl(gate_only, host::Field::min_busbw, "20");
  CHECK(gate_only.wants_nccl_test());
  CHECK_THROWS_WITH(host::set_nccl(gate_only, host::Field::hidden_size, "51.5"),
                    Catch::Contains("'hidden_size' wants a model's hidden size"));
  CHECK_THROWS_WITH(host::set_nccl(gate_only, host::Field::max_allreduce_us, "-3"),
                    Catch::Contains("a latency in microseconds"));
  CHECK_THROWS_WITH(host::parse_profile("layers: many\n", "p.yaml", gate_only),
                    Catch::Contains("p.yaml:1") && Catch::Contains("'layers' wants"));
}
