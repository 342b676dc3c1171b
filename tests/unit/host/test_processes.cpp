// host/processes: the systemd unit from a cgroup file, a process's listening
// ports from a /proc tree made here, and nvidia-smi's --query-compute-apps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "provkit/error.hpp"
#include "provkit/host/gpu.hpp"
#include "provkit/host/processes.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::host;
namespace fs = std::filesystem;

TEST_CASE("unit_from_cgroup: a system service, a template instance", "[host][processes]") {
  auto u = unit_from_cgroup("0::/system.slice/llama-server@0.service\n");
  REQUIRE(u);
  CHECK(u->name == "llama-server@0.service");
  CHECK_FALSE(u->user);
  CHECK(stop_command(*u) == "systemctl stop llama-server@0.service");
  u = unit_from_cgroup("0::/system.slice/system-vllm.slice/vllm@h100.service");
  REQUIRE(u);
  CHECK(u->name == "vllm@h100.service");
  // A service that delegates sub-cgroups: the process is still its.
  u = unit_from_cgroup("0::/system.slice/ollama.service/payload\n");
  REQUIRE(u);
  CHECK(u->name == "ollama.service");
}

TEST_CASE("unit_from_cgroup: a user unit under user@UID.service", "[host][processes]") {
  auto u = unit_from_cgroup("0::/user.slice/user-1000.slice/user@1000.service/app.slice/llama.service\n");
  REQUIRE(u);
  CHECK(u->name == "llama.service");
  CHECK(u->user);
  CHECK(u->uid == 1000);
  CHECK(stop_command(*u) == "systemctl --user stop llama.service (as uid 1000)");
  // The user manager itself is a system unit.
  u = unit_from_cgroup("0::/user.slice/user-1000.slice/user@1000.service/init.scope\n");
  REQUIRE(u);
  CHECK(u->name == "user@1000.service");
  CHECK_FALSE(u->user);
}

TEST_CASE("unit_from_cgroup: no unit", "[host][processes]") {
  CHECK_FALSE(unit_from_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
  CHECK_FALSE(unit_from_cgroup("0::/\n"));
  CHECK_FALSE(unit_from_cgroup("0::/system.slice/docker-4f1c.scope\n"));
  CHECK_FALSE(unit_from_cgroup(""));
  CHECK_FALSE(unit_from_cgroup("garbage without colons\n"));
}

TEST_CASE("unit_from_cgroup: cgroup v1 and hybrid files", "[host][processes]") {
  // v1: the controllers' lines may name other paths; the name=systemd line is systemd's.
  auto u = unit_from_cgroup(
      "12:pids:/system.slice/other.service\n"
      "11:memory:/\n"
      "1:name=systemd:/system.slice/llama-server@1.service\n");
  REQUIRE(u);
  CHECK(u->name == "llama-server@1.service");
  // hybrid: the unified line is read first.
  u = unit_from_cgroup(
      "1:name=systemd:/system.slice/old.service\n"
      "0::/system.slice/tgi.service\n");
  REQUIRE(u);
  CHECK(u->name == "tgi.service");
}

TEST_CASE("describe_process: command, unit and listening ports from a /proc tree", "[host][processes]") {
  test::TempDir dir("processes");
  const fs::path proc = dir.path;
  fs::create_directories(proc / "net");
  fs::create_directories(proc / "4242" / "fd");
  std::ofstream(proc / "net" / "tcp")
      << "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
         "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1\n"
         "   1: 0100007F:1F91 00000000:0000 01 00000000:00000000 00:00000000 00000000  1000        0 556 1\n";
  std::ofstream(proc / "net" / "tcp6")
      << "  sl  local_address rem_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout inode\n"
         "   0: 00000000000000000000000000000000:22B8 00000000000000000000000000000000:0000 0A 0:0 0:0 0 0 0 777 1\n";
  std::ofstream(proc / "4242" / "cmdline", std::ios::binary) << std::string("llama-server\0-m\0x.gguf\0", 24);
  std::ofstream(proc / "4242" / "cgroup") << "0::/system.slice/llama-server@0.service\n";
  fs::create_symlink("socket:[555]", proc / "4242" / "fd" / "3");
  fs::create_symlink("socket:[556]", proc / "4242" / "fd" / "4");  // established, not listening
  fs::create_symlink("socket:[777]", proc / "4242" / "fd" / "5");
  fs::create_symlink("/dev/nvidia0", proc / "4242" / "fd" / "6");

  auto sockets = listening_sockets(proc);
  CHECK(sockets.size() == 2);
  auto f = describe_process(4242, sockets, proc);
  CHECK(f.command == "llama-server -m x.gguf");
  REQUIRE(f.unit);
  CHECK(f.unit->name == "llama-server@0.service");
  CHECK(f.ports_readable);
  REQUIRE(f.ports.size() == 2);
  std::vector<std::string> seen;
  for (const auto& s : f.ports) seen.push_back(s.address + " " + std::to_string(s.port));
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"127.0.0.1 8080", ":: 8888"});

  // A pid /proc does not have: no command, no unit, fds unreadable.
  auto gone = describe_process(9999, sockets, proc);
  CHECK(gone.command.empty());
  CHECK_FALSE(gone.unit);
  CHECK_FALSE(gone.ports_readable);
  // The port filter that --port-free's holder lookup uses.
  CHECK(listening_sockets(proc, 8888).size() == 1);
  CHECK(listening_sockets(proc, 9).empty());
}

TEST_CASE("parse_smi_apps: processes per GPU by uuid", "[host][processes]") {
  std::vector<gpu::Device> devices(2);
  devices[0].uuid = "GPU-aaaa";
  devices[1].uuid = "GPU-bbbb";
  gpu::parse_smi_apps(
      "GPU-aaaa, 1234, 20480\n"
      "GPU-bbbb, 77, [N/A]\n"
      "\n"
      "GPU-cccc, 5, 10\n"  // a uuid the query did not list (the fallback raced a hotplug): skipped
      "GPU-aaaa, 99, 512\n",
      devices);
  REQUIRE(devices[0].processes.size() == 2);
  CHECK(devices[0].processes[0].pid == 1234);
  CHECK(devices[0].processes[0].memory == std::uint64_t{20480} * 1024 * 1024);
  CHECK(devices[0].processes[0].compute);
  CHECK(devices[0].processes[1].pid == 99);
  REQUIRE(devices[1].processes.size() == 1);
  CHECK(devices[1].processes[0].pid == 77);
  CHECK_FALSE(devices[1].processes[0].memory);
}

TEST_CASE("parse_smi_apps: a line it cannot read is an error naming it", "[host][processes]") {
  std::vector<gpu::Device> devices(1);
  devices[0].uuid = "GPU-aaaa";
  CHECK_THROWS_WITH(gpu::parse_smi_apps("GPU-aaaa, 12\n", devices),
                    Catch::Contains("line 1") && Catch::Contains("GPU-aaaa, 12"));
  CHECK_THROWS_AS(gpu::parse_smi_apps("GPU-aaaa, x, 10\n", devices), Error);
  CHECK_NOTHROW(gpu::parse_smi_apps("", devices));
}
