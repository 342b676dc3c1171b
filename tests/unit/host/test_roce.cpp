// host/roce: GID tables read from a /sys/class/infiniband tree made here, and
// the index NCCL_IB_GID_INDEX should take.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "host/roce.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;

namespace {

const char* kZero = "0000:0000:0000:0000:0000:0000:0000:0000";
const char* kLinkLocal = "fe80:0000:0000:0000:1e34:daff:fe5a:1b2c";
const char* kTen = "0000:0000:0000:0000:0000:ffff:0a00:0005";  // ::ffff:10.0.0.5

void gid(const test::TempDir& tmp, int i, const char* address, const char* type = nullptr, const char* ndev = "eth0") {
  const std::string port = "sys/class/infiniband/mlx5_0/ports/1/";
  tmp.write(port + "gids/" + std::to_string(i), std::string(address) + "\n");
  if (type) {
    tmp.write(port + "gid_attrs/types/" + std::to_string(i), std::string(type) + "\n");
    tmp.write(port + "gid_attrs/ndevs/" + std::to_string(i), std::string(ndev) + "\n");
  }
}

}  // namespace

TEST_CASE("a holed GID table: entries, holes, and the RoCE v2 entry of this node's IPv4", "[host][roce]") {
  test::TempDir tmp("roce");
  tmp.write("sys/class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
  gid(tmp, 0, kLinkLocal, "IB/RoCE v1");
  gid(tmp, 1, kLinkLocal, "RoCE v2");
  gid(tmp, 2, kZero);  // a removed address
  gid(tmp, 3, kTen, "IB/RoCE v1");
  gid(tmp, 4, kTen, "RoCE v2");
  gid(tmp, 5, kZero);
  auto ports = host::read_rdma_ports(tmp.path / "sys");
  REQUIRE(ports.size() == 1);
  const auto& p = ports[0];
  CHECK(p.device == "mlx5_0");
  CHECK(p.link_layer == "Ethernet");
  REQUIRE(p.gids.size() == 4);
  CHECK(p.gids[0].gid == "fe80::1e34:daff:fe5a:1b2c");
  CHECK_FALSE(p.gids[0].ipv4());
  CHECK(p.gids[3].gid == "::ffff:10.0.0.5");
  CHECK(p.gids[3].ipv4() == "10.0.0.5");
  CHECK(p.gids[3].netdev == "eth0");
  CHECK(p.holes == std::vector<int>{2});  // slot 5 is past the last entry: not a hole
  CHECK(host::nccl_gid_index(p, {"127.0.0.1", "10.0.0.5"}) == 4);
  CHECK_FALSE(host::nccl_gid_index(p, {"10.0.0.6"}));  // another node's address
  CHECK(host::read_rdma_ports(tmp.path / "sys", "mlx5_1").empty());
  CHECK(host::read_rdma_ports(tmp.path / "nothing").empty());
}

TEST_CASE("a link-local RoCE v2 entry is never the index", "[host][roce]") {
  host::RdmaPort p{.device = "d",
                   .gids = {{.index = 0, .gid = "fe80::1", .type = "RoCE v2"},
                            {.index = 1, .gid = "::ffff:10.0.0.5", .type = "IB/RoCE v1"}}};
  CHECK_FALSE(host::nccl_gid_index(p, {"10.0.0.5"}));
}

TEST_CASE("this node has an IPv4 loopback address", "[host][roce]") {
  auto v4 = host::node_ipv4_addresses();
  CHECK(std::find(v4.begin(), v4.end(), "127.0.0.1") != v4.end());
}
