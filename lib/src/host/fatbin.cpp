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
#include <zstd.h>
#include "read_le.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "provkit/error.hpp"

#include "provkit/host/kernels.hpp"

namespace provkit::host::kernels {

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint64_t kFlagArchSpecific = 0x100000;
constexpr std::uint64_t kFlagFamily = 0x200000;
constexpr std::uint64_t kFlagZstd = 0x8000;
constexpr std::uint64_t kFlagLz4 = 0x2000;
constexpr std::size_t kEntryHeaderMin = 64;

using detail::at;
using detail::hex;

// The next 4-aligned offset (from the section's start) at or after `from`
// where the container magic is, reading at most `limit` bytes of gap in
// blocks; `end` when none.
std::uint64_t find_magic(const elf::ObjectFile& f, std::uint64_t start, std::uint64_t from, std::uint64_t end,
                         std::uint64_t limit = ~std::uint64_t(0)) {
  from = start + ((from - start + 3) & ~std::uint64_t(3));
  const std::uint64_t stop = limit < end - std::min(end, from) ? from + limit : end;
  std::vector<unsigned char> block(64 * 1024);
  // The next container is usually a few bytes on: a small first read, then large ones.
  std::uint64_t want = 256;
  while (from + 4 <= stop) {
    std::uint64_t n = std::min<std::uint64_t>(want, stop - from);
    want = block.size();
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
        auto& img = into.images.back();
        img.embedded = embedded;
        img.payload_offset = e + entry_header;
        img.payload_size = payload;
        img.compressed_size = at<std::uint32_t>(h, 16);
        img.uncompressed_size = at<std::uint64_t>(h, 56);
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

namespace {

// The number of .text.<kernel> sections of a cubin (an ELF object) in `elf`; nullopt when it does not parse.
std::optional<std::size_t> text_sections(std::string_view elf) {
  if (elf.size() < 64 || elf.compare(0, 4, "\x7f" "ELF") != 0 || elf[4] != 2) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(elf.data());
  const auto shoff = at<std::uint64_t>(p, 0x28);
  const auto shentsize = at<std::uint16_t>(p, 0x3a), shnum = at<std::uint16_t>(p, 0x3c), shstrndx = at<std::uint16_t>(p, 0x3e);
  if (shentsize != 64 || shoff > elf.size() || std::uint64_t(shnum) * 64 > elf.size() - shoff || shstrndx >= shnum) return std::nullopt;
  auto sh = [&](std::size_t i) { return p + shoff + i * 64; };
  const auto names_off = at<std::uint64_t>(sh(shstrndx), 0x18), names_size = at<std::uint64_t>(sh(shstrndx), 0x20);
  if (names_off > elf.size() || names_size > elf.size() - names_off) return std::nullopt;
  std::string_view names = elf.substr(names_off, names_size);
  std::size_t count = 0;
  for (std::size_t i = 0; i < shnum; ++i) {
    const auto n = at<std::uint32_t>(sh(i), 0);
    if (n < names.size() && names.substr(n).rfind(".text.", 0) == 0) ++count;
  }
  return count;
}

}  // namespace

void count_cubin_kernels(Library& lib, const std::function<bool(const Image&)>& wanted) {
  std::optional<elf::ObjectFile> file;
  for (auto& img : lib.images) {
    if (img.kind != Kind::cubin || img.kernel_count || !wanted(img)) continue;
    try {
      if (!file) file.emplace(lib.path);
      if (!img.compressed) {
        img.kernel_count = text_sections(file->read(img.payload_offset, img.payload_size, "a cubin"));
        continue;
      }
      // zstd only (flag 0x8000; an LZ4 payload is left unread), and bounded.
      if (img.compressed_size == 0 || img.compressed_size > img.payload_size || img.uncompressed_size == 0 ||
          img.uncompressed_size > (64u << 20))
        continue;
      auto packed = file->read(img.payload_offset, img.compressed_size, "a compressed cubin");
      if (ZSTD_getFrameContentSize(packed.data(), packed.size()) == ZSTD_CONTENTSIZE_ERROR) continue;
      std::string out(img.uncompressed_size, '\0');
      auto n = ZSTD_decompress(out.data(), out.size(), packed.data(), packed.size());
      if (ZSTD_isError(n)) continue;
      out.resize(n);
      img.kernel_count = text_sections(out);
    } catch (const Error&) {
    }
  }
}

}  // namespace provkit::host::kernels
