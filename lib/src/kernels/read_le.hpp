#pragma once
// Private to kernels: the two small helpers the fatbin and offload-bundle readers share.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace provkit::kernels::detail {

// A value of type T at byte offset `off` (the formats are little-endian, as the host is).
template <class T, class Byte>
T at(const Byte* p, std::size_t off) {
  T v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}

inline std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace provkit::kernels::detail
