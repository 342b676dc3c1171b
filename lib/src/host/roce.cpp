#include "roce.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::host {

namespace {

constexpr int kMaxGids = 1024;

constexpr std::size_t kLineMax = 4096;  // a sysfs attribute is one page at most

std::optional<std::string> first_line(const fs::path& file) {
  std::string text;
  try {
    text = util::read_file_head(file, kLineMax);  // a FIFO or device: refused, never waited on or read forever
  } catch (const Error&) {
    return std::nullopt;  // an empty slot's type reads as EINVAL
  }
  if (text.empty()) return std::nullopt;
  return util::trim(text.substr(0, text.find('\n')));
}

// "fe80:0000:0000:0000:1e34:daff:fe5a:1b2c" (sysfs) -> 16 bytes; none when malformed.
std::optional<in6_addr> parse_sysfs_gid(const std::string& text) {
  auto groups = util::split(text, ':');
  if (groups.size() != 8) return std::nullopt;
  in6_addr a{};
  for (int i = 0; i < 8; ++i) {
    unsigned v = 0;
    const auto& g = groups[static_cast<std::size_t>(i)];
    auto [p, ec] = std::from_chars(g.data(), g.data() + g.size(), v, 16);
    if (g.size() != 4 || ec != std::errc() || p != g.data() + g.size()) return std::nullopt;
    const std::size_t at = std::size_t{2} * static_cast<std::size_t>(i);
    a.s6_addr[at] = static_cast<unsigned char>(v >> 8);
    a.s6_addr[at + 1] = static_cast<unsigned char>(v & 0xff);
  }
  return a;
}

int number_of(const std::string& name) {
  int v = -1;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
  return ec == std::errc() && p == name.data() + name.size() ? v : -1;
}

RdmaPort read_port(const fs::path& dir, const std::string& device, int port) {
  RdmaPort p{.device = device,
             .port = port,
             .link_layer = first_line(dir / "link_layer").value_or(""),
             .state = first_line(dir / "state").value_or("")};
  std::vector<int> empty;
  for (int i = 0; i < kMaxGids; ++i) {
    auto text = first_line(dir / "gids" / std::to_string(i));
    if (!text) {
      std::error_code ec;
      if (!fs::exists(dir / "gids" / std::to_string(i), ec)) break;  // the table's end
      empty.push_back(i);
      continue;
    }
    auto addr = parse_sysfs_gid(*text);
    static const in6_addr zero{};
    if (!addr || std::equal(std::begin(addr->s6_addr), std::end(addr->s6_addr), std::begin(zero.s6_addr))) {
      empty.push_back(i);
      continue;
    }
    char buf[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, &*addr, buf, sizeof buf);
    p.gids.push_back({.index = i,
                      .gid = buf,
                      .type = first_line(dir / "gid_attrs" / "types" / std::to_string(i)).value_or(""),
                      .netdev = first_line(dir / "gid_attrs" / "ndevs" / std::to_string(i)).value_or("")});
  }
  int last = p.gids.empty() ? -1 : p.gids.back().index;
  for (int i : empty)
    if (i < last) p.holes.push_back(i);
  return p;
}

}  // namespace

std::optional<std::string> GidEntry::ipv4() const {
  in6_addr a{};
  if (::inet_pton(AF_INET6, gid.c_str(), &a) != 1 || !IN6_IS_ADDR_V4MAPPED(&a)) return std::nullopt;
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, a.s6_addr + 12, buf, sizeof buf);
  return std::string(buf);
}

std::vector<RdmaPort> read_rdma_ports(const fs::path& sysfs_root, const std::string& only_device) {
  std::vector<RdmaPort> out;
  std::error_code ec;
  for (fs::directory_iterator dev(sysfs_root / "class" / "infiniband", ec), end; !ec && dev != end; dev.increment(ec)) {
    auto name = dev->path().filename().string();
    if (!only_device.empty() && name != only_device) continue;
    std::error_code ec2;
    for (fs::directory_iterator port(dev->path() / "ports", ec2); !ec2 && port != end; port.increment(ec2)) {
      int n = number_of(port->path().filename().string());
      if (n >= 0) out.push_back(read_port(port->path(), name, n));
    }
  }
  std::sort(out.begin(), out.end(), [](const RdmaPort& a, const RdmaPort& b) {
    return std::tie(a.device, a.port) < std::tie(b.device, b.port);
  });
  return out;
}

std::optional<int> nccl_gid_index(const RdmaPort& port, const std::vector<std::string>& node_ipv4) {
  for (const auto& g : port.gids) {
    auto v4 = g.ipv4();
    if (g.roce_v2() && v4 && std::find(node_ipv4.begin(), node_ipv4.end(), *v4) != node_ipv4.end()) return g.index;
  }
  return std::nullopt;
}

std::vector<std::string> node_ipv4_addresses() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (auto* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, buf, sizeof buf);
    if (std::find(out.begin(), out.end(), buf) == out.end()) out.emplace_back(buf);
  }
  ::freeifaddrs(list);
  return out;
}

}  // namespace provkit::host
