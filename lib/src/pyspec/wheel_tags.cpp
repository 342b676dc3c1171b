#include "provkit/pyspec/wheel_tags.hpp"

#include "provkit/util/strings.hpp"

namespace provkit::pyspec {

namespace {
std::vector<std::string> platforms(const TagInputs& it) {
  std::vector<std::string> out;
  if (it.sys_platform && *it.sys_platform != "linux") return out;
  std::string arch = it.machine;
  if (!it.is_64bit && arch == "x86_64") arch = "i686";
  int glibc_major = 0, glibc_minor = 0;
  if (std::sscanf(it.glibc.c_str(), "%d.%d", &glibc_major, &glibc_minor) == 2 && glibc_major == 2) {
    // manylinux_2_5 is the floor for x86 (manylinux1); newer arches start at 2_17.
    int floor = (arch == "x86_64" || arch == "i686") ? 5 : 17;
    for (int minor = glibc_minor; minor >= floor; --minor) {
      out.push_back("manylinux_2_" + std::to_string(minor) + "_" + arch);
      if (minor == 17) out.push_back("manylinux2014_" + arch);
      if (minor == 12) out.push_back("manylinux2010_" + arch);
      if (minor == 5) out.push_back("manylinux1_" + arch);
    }
  }
  out.push_back("linux_" + arch);
  return out;
}
}  // namespace

std::vector<std::string> compatible_tags(const TagInputs& it) {
  std::vector<std::string> tags;
  const std::string xy = std::to_string(it.major) + std::to_string(it.minor);
  const bool cpython = it.implementation == "cpython";
  const std::string impl = cpython ? "cp" : (it.implementation == "pypy" ? "pp" : it.implementation.substr(0, 2));
  const auto plats = platforms(it);
  const std::string abi = impl + xy + it.abiflags;
  tags.reserve(plats.size() * (2 * it.minor + 8) + it.minor + 3);
  for (auto& p : plats) tags.push_back(util::concat({impl, xy, "-", abi, "-", p}));
  // abi3 is for the stable ABI: CPython without free threading.
  if (cpython && it.abiflags.find('t') == std::string::npos) {
    for (int minor = it.minor; minor >= 2; --minor)
      for (auto& p : plats) tags.push_back("cp3" + std::to_string(minor) + "-abi3-" + p);
  }
  for (auto& p : plats) tags.push_back(util::concat({impl, xy, "-none-", p}));
  for (int minor = it.minor; minor >= 0; --minor)
    for (auto& p : plats) tags.push_back("py3" + std::to_string(minor) + "-none-" + p);
  for (auto& p : plats) tags.push_back("py3-none-" + p);
  tags.push_back(impl + xy + "-none-any");
  tags.push_back("py" + xy + "-none-any");
  tags.emplace_back("py3-none-any");
  for (int minor = it.minor - 1; minor >= 0; --minor) tags.push_back("py3" + std::to_string(minor) + "-none-any");
  return tags;
}

TagRanking::TagRanking(std::vector<std::string> tags) : tags_(std::move(tags)) {
  for (std::size_t i = 0; i < tags_.size(); ++i) priority_.emplace(tags_[i], static_cast<int>(i));
}

int TagRanking::rank(const WheelName& wheel) const {
  int best = -1;
  for (auto& t : wheel.tags()) {
    auto it = priority_.find(t);
    if (it != priority_.end() && (best < 0 || it->second < best)) best = it->second;
  }
  return best;
}

}  // namespace provkit::pyspec
