// host/pcie: bus ids, the PCI Express capability in config space, and the
// walk from a device to its root port through a sysfs tree made here.
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "host/pcie.hpp"
#include "provkit/error.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;

namespace {

// A config space image: PM capability at 0x40, then PCI Express at 0x60 (or
// `pcie_at`), with port type `type` and Device Capabilities 2 = `devcap2`.
std::string config(unsigned type, unsigned devcap2, std::size_t size = 4096, unsigned pcie_at = 0x60) {
  std::string c(4096, '\0');
  c[0x06] = 0x10;
  c[0x34] = 0x40;
  c[0x40] = 0x01;
  c[0x41] = static_cast<char>(pcie_at);
  c[pcie_at] = 0x10;
  c[pcie_at + 2] = static_cast<char>(0x2 | type << 4);
  for (int i = 0; i < 4; ++i) c[pcie_at + 0x24 + i] = static_cast<char>(devcap2 >> (8 * i) & 0xff);
  c.resize(size);  // what a read of `config` returns
  return c;
}

}  // namespace

TEST_CASE("bus ids take sysfs's spelling", "[host][pcie]") {
  CHECK(host::canonical_bus_id("00000000:01:00.0") == "0000:01:00.0");
  CHECK(host::canonical_bus_id("0000:C1:00.0") == "0000:c1:00.0");
  CHECK(host::canonical_bus_id(" 0001:00:06.3\n") == "0001:00:06.3");
  CHECK(host::canonical_bus_id("00010000:e1:00.0") == "10000:e1:00.0");  // a VMD domain, as Linux names it
  CHECK(host::canonical_bus_id("pci0000:00").empty());
  CHECK(host::canonical_bus_id("0000:01:00.8").empty());
  CHECK(host::canonical_bus_id("0000:01:00").empty());
  CHECK(host::canonical_bus_id("../../etc:00:00.0").empty());
}

TEST_CASE("Device Capabilities 2 is read from the PCI Express capability", "[host][pcie]") {
  auto root = host::parse_config("0000:00:01.0", config(4, 1u << 6 | 1u << 7 | 1u << 8));
  REQUIRE(root.readable);
  CHECK(root.type == host::PortType::root_port);
  CHECK(root.caps.routing);
  CHECK(root.caps.completer32);
  CHECK(root.caps.completer64);
  CHECK_FALSE(root.caps.cas128);
  auto down = host::parse_config("0000:02:00.0", config(6, 1u << 9, 4096, 0xc8));
  REQUIRE(down.readable);
  CHECK(down.type == host::PortType::downstream_port);
  CHECK_FALSE(down.caps.routing);
  CHECK(down.caps.cas128);
}

TEST_CASE("a short or capability-less config space is reported, never guessed", "[host][pcie]") {
  auto user = host::parse_config("0000:00:01.0", config(4, 1u << 6, 64));
  CHECK_FALSE(user.readable);
  CHECK_THAT(user.why, Catch::Contains("reads as 64 bytes") && Catch::Contains("root"));
  auto no_list = config(4, 1u << 6);
  no_list[0x06] = 0;
  CHECK_THAT(host::parse_config("x", no_list).why, Catch::Contains("no capability list"));
  auto loop = config(4, 1u << 6);
  loop[0x40] = 0x05;  // not PCIe, and points at itself: the walk ends
  loop[0x41] = 0x40;
  CHECK_THAT(host::parse_config("x", loop).why, Catch::Contains("no PCI Express capability"));
  auto past_end = config(4, 1u << 6, 0x70);  // the capability is there, its DevCap2 is cut off
  CHECK_FALSE(host::parse_config("x", past_end).readable);
}

TEST_CASE("a config file is walked a field at a time, never past byte 256", "[host][pcie]") {
  test::TempDir tmp("pcie");
  tmp.write("dev/config", config(0, 3u << 7));  // 4096 bytes, as root reads them
  auto dev = host::read_function(tmp.path / "dev", "0000:03:00.0");
  REQUIRE(dev.readable);
  CHECK(dev.caps.completer64);
  CHECK(dev.type == host::PortType::endpoint);
  tmp.write("user/config", config(0, 3u << 7, 64));  // what a user who is not root gets
  auto user = host::read_function(tmp.path / "user", "0000:03:00.0");
  CHECK_FALSE(user.readable);
  CHECK_THAT(user.why, Catch::Contains("only root may read it"));
  // A PCI Express capability at 0xf0 has its Device Capabilities 2 at 0x114, in the extended space: not read,
  // though the file holds it, for the image and the file alike.
  auto far = config(0, 3u << 7, 4096, 0xf0);
  CHECK_FALSE(host::parse_config("x", far).readable);
  tmp.write("far/config", far);
  CHECK_FALSE(host::read_function(tmp.path / "far", "x").readable);
  CHECK_THAT(host::read_function(tmp.path / "none", "x").why, Catch::Contains("cannot read it"));
  fs::create_directories(tmp.path / "fifo");
  REQUIRE(::mkfifo((tmp.path / "fifo/config").c_str(), 0600) == 0);
  CHECK_THAT(host::read_function(tmp.path / "fifo", "x").why, Catch::Contains("cannot read it"));  // never waited on
}

TEST_CASE("the path from a device to its root port, nearest bridge first", "[host][pcie]") {
  test::TempDir tmp("pcie");
  auto sys = tmp.path / "sys";
  auto root = sys / "devices/pci0000:00/0000:00:01.0";
  tmp.write("sys/devices/pci0000:00/0000:00:01.0/config", config(4, 1u << 6 | 3u << 7));
  tmp.write("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/config", config(5, 1u << 6));
  tmp.write("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/config", config(6, 0));
  tmp.write("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/config", config(0, 3u << 7));
  fs::create_directories(sys / "bus/pci/devices");
  fs::create_symlink("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0",
                     sys / "bus/pci/devices/0000:03:00.0");
  auto path = host::read_atomics_path(sys, "0000:03:00.0");
  REQUIRE(path.error.empty());
  REQUIRE(path.readable());
  REQUIRE(path.bridges.size() == 3);
  CHECK(path.bridges[0].bdf == "0000:02:00.0");
  CHECK(path.bridges[2].bdf == "0000:00:01.0");
  REQUIRE(path.first_blocking_bridge() != nullptr);
  CHECK(path.first_blocking_bridge()->bdf == "0000:02:00.0");
  CHECK(path.device.caps.completer64);
  CHECK(host::read_atomics_path(sys, "0000:09:00.0").error.find("no PCI device 0000:09:00.0") != std::string::npos);
  // A name that is not a bus id never reaches the file system walk.
  CHECK_FALSE(host::read_atomics_path(sys, "../../../devices").error.empty());
}

TEST_CASE("display functions of a vendor, as the bus shows them", "[host][pcie]") {
  test::TempDir tmp("pcie");
  auto fn = [&](const std::string& id, const std::string& vendor, const std::string& cls) {
    tmp.write("sys/bus/pci/devices/" + id + "/vendor", vendor + "\n");
    tmp.write("sys/bus/pci/devices/" + id + "/class", cls + "\n");
  };
  fn("0000:c1:00.0", "0x10de", "0x030200");                        // a 3D controller (an H200)
  fn("0000:41:00.0", "0x10de", "0x030000");                        // a VGA controller (a 3090)
  fn("0000:41:00.1", "0x10de", "0x040300");                        // its HDMI audio function
  fn("0000:02:00.0", "0x1002", "0x030000");                        // an AMD card
  fn("0000:00:01.0", "0x8086", "0x060400");                        // a root port
  tmp.write("sys/bus/pci/devices/pci0000:00/vendor", "0x10de\n");  // not a bus id
  CHECK(host::display_bus_ids(tmp.path / "sys", "0x10de") == std::vector<std::string>{"0000:41:00.0", "0000:c1:00.0"});
  CHECK(host::display_bus_ids(tmp.path / "sys", "0x1002") == std::vector<std::string>{"0000:02:00.0"});
  CHECK(host::display_bus_ids(tmp.path / "none", "0x10de").empty());
}
