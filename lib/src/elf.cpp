#include "provkit/elf.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "provkit/fsutil.hpp"

namespace provkit::elf {

std::optional<Identity> read_identity(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  unsigned char hdr[sizeof(Elf64_Ehdr)] = {};
  in.read(reinterpret_cast<char*>(hdr), sizeof hdr);
  auto got = static_cast<std::size_t>(in.gcount());
  if (got < EI_NIDENT || std::memcmp(hdr, ELFMAG, SELFMAG) != 0) return std::nullopt;
  Identity id;
  id.elf_class = hdr[EI_CLASS];
  if (id.elf_class == ELFCLASS32 && got >= sizeof(Elf32_Ehdr)) {
    Elf32_Ehdr e;
    std::memcpy(&e, hdr, sizeof e);
    id.machine = e.e_machine;
    id.type = e.e_type;
  } else if (id.elf_class == ELFCLASS64 && got >= sizeof(Elf64_Ehdr)) {
    Elf64_Ehdr e;
    std::memcpy(&e, hdr, sizeof e);
    id.machine = e.e_machine;
    id.type = e.e_type;
  } else {
    return std::nullopt;
  }
  if (hdr[EI_DATA] != ELFDATA2LSB) return std::nullopt;  // only little-endian hosts are supported
  return id;
}

Identity host_identity() {
  Identity id;
  id.elf_class = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if defined(__x86_64__)
  id.machine = EM_X86_64;
#elif defined(__aarch64__)
  id.machine = EM_AARCH64;
#elif defined(__i386__)
  id.machine = EM_386;
#endif
  id.type = ET_DYN;
  return id;
}

std::string describe(const Identity& id) {
  std::string cls = id.elf_class == ELFCLASS64 ? "ELF64" : id.elf_class == ELFCLASS32 ? "ELF32" : "ELF?";
  std::string machine;
  switch (id.machine) {
    case EM_X86_64: machine = "x86-64"; break;
    case EM_386: machine = "i386"; break;
    case EM_AARCH64: machine = "aarch64"; break;
    case EM_ARM: machine = "arm"; break;
    default: machine = "machine " + std::to_string(id.machine);
  }
  return cls + " " + machine;
}

std::vector<CacheEntry> read_ld_so_cache(const fs::path& cache) {
  std::vector<CacheEntry> out;
  std::string data;
  try {
    data = read_file(cache);
  } catch (...) {
    return out;
  }
  // New format: magic "glibc-ld.so.cache" "1.1", nlibs, len_strings, flags,
  // padding, then nlibs entries of {int32 flags, uint32 key, uint32 value,
  // uint32 osversion, uint64 hwcap}; string offsets are from the file start.
  static const char magic[] = "glibc-ld.so.cache1.1";
  std::size_t start = 0;
  if (data.compare(0, 11, "ld.so-1.7.0") == 0) {
    // Old format header followed by the new one, 8-byte aligned.
    if (data.size() < 16) return out;
    std::uint32_t nold;
    std::memcpy(&nold, data.data() + 12, 4);
    start = (16 + static_cast<std::size_t>(nold) * 12 + 7) & ~std::size_t(7);
  }
  if (data.size() < start + 48 || data.compare(start, sizeof magic - 1, magic) != 0) return out;
  std::uint32_t nlibs;
  std::memcpy(&nlibs, data.data() + start + 20, 4);
  const std::size_t header = 48, entry = 24;
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    std::size_t at = start + header + static_cast<std::size_t>(i) * entry;
    if (at + entry > data.size()) break;
    std::uint32_t key, value;
    std::memcpy(&key, data.data() + at + 4, 4);
    std::memcpy(&value, data.data() + at + 8, 4);
    auto str = [&](std::uint32_t off) -> std::string {
      if (off >= data.size()) return {};
      auto end = data.find('\0', off);
      if (end == std::string::npos) return {};
      return data.substr(off, end - off);
    };
    auto name = str(key), path = str(value);
    if (!name.empty() && !path.empty()) out.push_back({name, path});
  }
  return out;
}

std::vector<fs::path> default_library_dirs() {
#if defined(__x86_64__)
  return {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
#elif defined(__aarch64__)
  return {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
#else
  return {"/lib", "/usr/lib"};
#endif
}

}  // namespace provkit::elf
