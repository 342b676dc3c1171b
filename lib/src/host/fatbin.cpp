// CUDA fatbins in an ELF section (kernels.hpp): the containers' headers and
// their entries' headers, read one by one; payloads are skipped, never read.
//
// A section holds containers back to back (8-byte aligned, zero padding
// between some). A container is a 16-byte header,
//   u32 magic 0xBA55ED50, u16 version 1, u16 header size, u64 size of its entries,
// then entries, each a header of its own size (64, 80, 96 or 112 bytes as
// nvcc 13 writes them) followed by its payload:
//   u16 kind (1 PTX, 2 cubin), u16, u32 header size, u64 payload size,
//   u32 compressed size, u32, u16 version minor, u16 version major (the PTX
//   ISA for PTX, the cubin ABI for cubins), u32 arch (90), u32, u32,
//   u64 flags (0x100000 arch-specific 'a', 0x200000 family 'f', 0x8000 zstd,
//   0x2000 LZ4), ...
// The arch and its variant are in the header even when the payload is
// compressed, so nothing is decompressed.
#include <algorithm>
#include <cstring>

#include "provkit/host/kernels.hpp"

namespace provkit::host::kernels {

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint64_t kFlagArchSpecific = 0x100000;
constexpr std::uint64_t kFlagFamily = 0x200000;
constexpr std::uint64_t kFlagZstd = 0x8000;
constexpr std::uint64_t kFlagLz4 = 0x2000;
constexpr std::size_t kEntryHeaderMin = 64;

template <class T>
T at(const unsigned char* p, std::size_t off) {
  T v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The next 4-aligned offset (from the section's start) at or after `from`
// where the container magic is, reading at most `limit` bytes of gap in
// blocks; `end` when none.
std::uint64_t find_magic(const elf::ObjectFile& f, std::uint64_t start, std::uint64_t from, std::uint64_t end,
                         std::uint64_t limit = ~std::uint64_t(0)) {
  from = start + ((from - start + 3) & ~std::uint64_t(3));
  const std::uint64_t stop = limit < end - std::min(end, from) ? from + limit : end;
  std::vector<unsigned char> block(64 * 1024);
  while (from + 4 <= stop) {
    std::uint64_t n = std::min<std::uint64_t>(block.size(), stop - from);
    f.read_into(block.data(), from, n, "a fatbin section");
    for (std::uint64_t i = 0; i + 4 <= n; i += 4)
      if (at<std::uint32_t>(block.data(), i) == kFatbinMagic) return from + i;
    from += n;
  }
  return end;
}

Image entry_image(const unsigned char* h, const std::string& section) {
  Image img;
  img.section = section;
  const auto kind = at<std::uint16_t>(h, 0);
  const auto minor = at<std::uint16_t>(h, 24), major = at<std::uint16_t>(h, 26);
  const auto arch = at<std::uint32_t>(h, 28);
  const auto flags = at<std::uint64_t>(h, 40);
  img.kind = kind == 1 ? Kind::ptx : Kind::cubin;
  img.arch.arch = {static_cast<int>(arch / 10), static_cast<int>(arch % 10)};
  img.arch.ptx = img.kind == Kind::ptx;
  img.arch.variant = (flags & kFlagArchSpecific) ? 'a' : (flags & kFlagFamily) ? 'f' : 0;
  img.target = (img.kind == Kind::ptx ? "compute_" : "sm_") + std::to_string(arch) +
               (img.arch.variant ? std::string(1, img.arch.variant) : "");
  img.arch.text = img.target;
  if (img.kind == Kind::ptx) img.ptx_isa = std::to_string(major) + "." + std::to_string(minor);
  img.compressed = (flags & (kFlagZstd | kFlagLz4)) != 0;
  return img;
}

}  // namespace

void read_fatbins(const elf::ObjectFile& f, const elf::Section& section, Library& into, bool embedded) {
  const std::uint64_t start = section.offset, end = section.offset + section.size;
  const bool relocatable = section.name == "__nv_relfatbin";
  std::uint64_t pos = find_magic(f, start, start, end);
  while (pos + 16 <= end) {
    unsigned char head[16];
    f.read_into(head, pos, sizeof head, "a fatbin header");
    const auto version = at<std::uint16_t>(head, 4);
    const auto header_size = at<std::uint16_t>(head, 6);
    const auto entries_size = at<std::uint64_t>(head, 8);
    const std::string where = section.name + " at " + hex(pos);
    if (version != 1 || header_size < 16 || header_size > end - pos || entries_size > end - pos - header_size) {
      into.problems.push_back(where + ": a fatbin header that does not fit its section (version " + std::to_string(version) +
                              ", " + std::to_string(entries_size) + " bytes of entries)");
      return;
    }
    const std::uint64_t container_end = pos + header_size + entries_size;
    std::uint64_t e = pos + header_size;
    while (e + kEntryHeaderMin <= container_end) {
      unsigned char h[kEntryHeaderMin];
      f.read_into(h, e, sizeof h, "a fatbin entry header");
      const auto kind = at<std::uint16_t>(h, 0);
      const auto entry_header = at<std::uint32_t>(h, 4);
      const auto payload = at<std::uint64_t>(h, 8);
      if (entry_header < kEntryHeaderMin || entry_header > container_end - e || payload > container_end - e - entry_header) {
        into.problems.push_back(where + ": an entry at " + hex(e) + " that does not fit its container (" +
                                std::to_string(entry_header) + "-byte header, " + std::to_string(payload) + "-byte payload)");
        return;
      }
      if (kind == 1 || kind == 2) {
        into.images.push_back(entry_image(h, section.name));
        into.images.back().relocatable = relocatable;
        into.images.back().embedded = embedded;
      } else if (!relocatable) {
        const int arch = static_cast<int>(at<std::uint32_t>(h, 28));
        auto it = std::find_if(into.other.begin(), into.other.end(), [&](const OtherEntries& o) { return o.kind == kind && o.arch == arch; });
        if (it == into.other.end()) into.other.push_back({kind, arch, 1});
        else ++it->count;
      }
      e += entry_header + payload;
    }
    pos = find_magic(f, start, container_end, end);
  }
}

}  // namespace provkit::host::kernels
