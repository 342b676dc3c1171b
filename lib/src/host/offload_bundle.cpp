// Clang offload bundles in an ELF section (kernels.hpp), as hipcc and the
// ROCm libraries embed them in .hip_fatbin, one bundle per translation unit:
//  - plain: "__CLANG_OFFLOAD_BUNDLE__", u64 entry count, then per entry
//    u64 offset (from the bundle's start), u64 size, u64 id length, the id
//    ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "host-x86_64-unknown-linux-gnu-");
//  - compressed: "CCOB", u16 version, u16 method (0 zlib, 1 zstd), then
//    v1: u32 uncompressed size, u64 hash; v2: u32 total size, u32 uncompressed
//    size, u64 hash; v3: u64 total size, u64 uncompressed size, u64 hash;
//    then the compressed plain bundle. Its ids are in the decompressed start,
//    so only that much is decompressed.
#include <zlib.h>
#include <zstd.h>
#include "read_le.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>

#include "kernels.hpp"
#include "provkit/error.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::host::kernels {

namespace {

// A bundle that is not what its header says: a problem of the library it is in, never a failure of the run
// (an I/O error still is one).
struct Malformed : Error {
  explicit Malformed(const std::string& why) : Error(Reason::check_failed, why) {}
};

constexpr std::string_view kPlainMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::string_view kCompressedMagic = "CCOB";
constexpr std::size_t kMaxTableBytes = 4 << 20;  // a bundle's entry table, at most (thousands of ids)

using detail::at;
using detail::hex;

// The target id of a bundle entry id: what follows the triple.
std::string target_of(const std::string& id) {
  auto gfx = id.rfind("-gfx");
  if (gfx != std::string::npos) return id.substr(gfx + 1);
  auto dash = id.find_last_of('-');
  return dash == std::string::npos ? id : id.substr(dash + 1);
}

// Parses a plain bundle's table from `head` (its first bytes; `available` of
// the bundle's bytes exist in all). Returns the bundle's size (its furthest
// entry end), 0 when `head` is too short to hold the table (`need` says how
// much it takes), or throws a sentence for a table that lies.
std::uint64_t parse_table(std::string_view head, std::uint64_t available, bool compressed, const std::string& section,
                          std::vector<Image>& out, std::size_t& need) {
  need = 0;
  if (head.size() < kPlainMagic.size() + 8) return need = kPlainMagic.size() + 8, 0;
  const auto count = at<std::uint64_t>(head.data(), kPlainMagic.size());
  if (count > available / 24)
    throw Malformed("a bundle of " + std::to_string(count) + " entries cannot fit in " + std::to_string(available) +
                    " bytes");
  std::size_t p = kPlainMagic.size() + 8;
  std::uint64_t bundle_end = p;
  std::vector<Image> images;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (head.size() < p + 24) return need = p + 24, 0;
    const auto offset = at<std::uint64_t>(head.data(), p), size = at<std::uint64_t>(head.data(), p + 8),
               id_len = at<std::uint64_t>(head.data(), p + 16);
    if (id_len > 4096) throw Malformed("a bundle entry id of " + std::to_string(id_len) + " bytes");
    if (head.size() < p + 24 + id_len) return need = p + 24 + id_len, 0;
    std::string id(head.substr(p + 24, id_len));
    if (offset > available || size > available - offset)
      throw Malformed("entry " + id + " (" + std::to_string(size) + " bytes at " + std::to_string(offset) +
                      ") lies beyond the bundle's " + std::to_string(available) + " bytes");
    bundle_end = std::max<std::uint64_t>(bundle_end, offset + size);
    p += 24 + id_len;
    if (id.rfind("host-", 0) == 0) continue;  // the host's (empty) entry
    Image img;
    img.kind = Kind::code_object;
    img.triple = id;
    img.target = target_of(id);
    img.compressed = compressed;
    img.section = section;
    images.push_back(std::move(img));
  }
  out.insert(out.end(), images.begin(), images.end());
  return std::max<std::uint64_t>(bundle_end, p);
}

// Decompresses the start of a compressed bundle's data until `enough` says
// the table is whole (or the data ends). Reads the file in blocks.
std::string inflate_start(const elf::ObjectFile& f, std::uint64_t from, std::uint64_t to, std::uint16_t method,
                          const std::function<bool(std::string_view)>& enough) {
  std::string out;
  std::vector<char> in(std::size_t{64} * 1024), buf(std::size_t{64} * 1024);
  if (method == 1) {
    std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> z(ZSTD_createDStream(), ZSTD_freeDStream);
    ZSTD_initDStream(z.get());
    while (from < to && out.size() < kMaxTableBytes) {
      std::uint64_t n = std::min<std::uint64_t>(in.size(), to - from);
      f.read_into(in.data(), from, n, "a compressed offload bundle");
      from += n;
      ZSTD_inBuffer ib{in.data(), n, 0};
      while (ib.pos < ib.size) {
        ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
        auto rc = ZSTD_decompressStream(z.get(), &ob, &ib);
        if (ZSTD_isError(rc)) throw Malformed(std::string("zstd: ") + ZSTD_getErrorName(rc));
        out.append(buf.data(), ob.pos);
        if (rc == 0) return out;
        if (enough(out) || out.size() >= kMaxTableBytes) return out;
      }
    }
    return out;
  }
  if (method == 0) {
    z_stream z{};
    if (inflateInit(&z) != Z_OK) throw Malformed("zlib: cannot start inflating");
    struct End {
      z_stream* z;
      ~End() { inflateEnd(z); }
    } end{&z};
    while (from < to && out.size() < kMaxTableBytes) {
      std::uint64_t n = std::min<std::uint64_t>(in.size(), to - from);
      f.read_into(in.data(), from, n, "a compressed offload bundle");
      from += n;
      z.next_in = reinterpret_cast<Bytef*>(in.data());
      z.avail_in = static_cast<uInt>(n);
      while (z.avail_in > 0) {
        z.next_out = reinterpret_cast<Bytef*>(buf.data());
        z.avail_out = static_cast<uInt>(buf.size());
        int rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) throw Malformed(std::string("zlib: ") + (z.msg ? z.msg : "corrupt data"));
        out.append(buf.data(), buf.size() - z.avail_out);
        if (rc == Z_STREAM_END || enough(out) || out.size() >= kMaxTableBytes) return out;
      }
    }
    return out;
  }
  throw Malformed("compression method " + std::to_string(method) + " (neither zlib nor zstd)");
}

// The next offset at or after `from` where a bundle starts (either magic),
// reading the gap in blocks; `end` when none.
std::uint64_t find_bundle(const elf::ObjectFile& f, std::uint64_t from, std::uint64_t end) {
  std::vector<char> block(std::size_t{64} * 1024);
  from = (from + 3) & ~std::uint64_t(3);  // bundles are at least 4-aligned, so a magic never straddles two blocks
  while (from + 4 <= end) {
    std::uint64_t n = std::min<std::uint64_t>(block.size(), end - from);
    f.read_into(block.data(), from, n, "an offload bundle section");
    std::string_view view(block.data(), n);
    for (std::size_t i = 0; i + 4 <= n; i += 4) {
      if (view.compare(i, 4, "__CL") == 0 || view.compare(i, 4, kCompressedMagic) == 0) return from + i;
    }
    from += n;
  }
  return end;
}

}  // namespace

void read_offload_bundles(const elf::ObjectFile& f, const elf::Section& section, Library& into) {
  const std::uint64_t end = section.offset + section.size;
  std::uint64_t pos = find_bundle(f, section.offset, end);
  while (pos + 4 <= end) {
    const std::string where = section.name + " at " + hex(pos);
    char magic[24] = {};
    const std::uint64_t available = end - pos;
    f.read_into(magic, pos, std::min<std::uint64_t>(sizeof magic, available), "an offload bundle");
    std::uint64_t next = 0;
    try {
      if (available >= kPlainMagic.size() && std::string_view(magic, kPlainMagic.size()) == kPlainMagic) {
        std::size_t need = 4096;
        std::string head;
        for (;;) {
          head = f.read(pos, std::min<std::uint64_t>({need, available, kMaxTableBytes}), "an offload bundle table");
          auto size = parse_table(head, available, false, section.name, into.images, need);
          if (size) {
            next = pos + size;
            break;
          }
          if (need > available || need > kMaxTableBytes) throw Malformed("its entry table runs past the section");
          need = std::max<std::size_t>(need, head.size() * 2);
        }
      } else if (std::string_view(magic, 4) == kCompressedMagic) {
        if (available < 8) throw Malformed("a compressed bundle header cut short");
        const auto version = at<std::uint16_t>(magic, 4), method = at<std::uint16_t>(magic, 6);
        std::uint64_t header = 0, total = 0, uncompressed = 0;
        char h[32] = {};
        f.read_into(h, pos, std::min<std::uint64_t>(sizeof h, available), "a compressed bundle header");
        if (version == 1) header = 20, uncompressed = at<std::uint32_t>(h, 8);
        else if (version == 2) header = 24, total = at<std::uint32_t>(h, 8), uncompressed = at<std::uint32_t>(h, 12);
        else if (version == 3) header = 32, total = at<std::uint64_t>(h, 8), uncompressed = at<std::uint64_t>(h, 16);
        else throw Malformed("a compressed bundle of version " + std::to_string(version) + " (1-3 are known)");
        if (header > available || (total && (total < header || total > available)))
          throw Malformed("a compressed bundle of " + std::to_string(total) + " bytes in " + std::to_string(available));
        const std::uint64_t data_end = total ? pos + total : end;
        std::vector<Image> images;
        std::size_t need = 0;
        std::uint64_t size = 0;
        std::string error;
        auto start = inflate_start(f, pos + header, data_end, method, [&](std::string_view out) {
          try {
            images.clear();
            size = parse_table(out, uncompressed, true, section.name, images, need);
          } catch (const Malformed& e) {
            error = e.what();
            return true;
          }
          return size != 0;
        });
        if (!error.empty()) throw Malformed(error);
        if (!size) {
          images.clear();
          size = parse_table(start, uncompressed, true, section.name, images, need);
          if (!size) throw Malformed("its decompressed start does not hold the whole entry table");
        }
        into.images.insert(into.images.end(), images.begin(), images.end());
        // v1 does not say where it ends: the next bundle is found by its magic.
        next = total ? pos + total : pos + header + 1;
      } else {
        next = pos + 4;  // a stray "__CL": look further
      }
    } catch (const Malformed& why) {
      into.problems.push_back(util::concat({where, ": ", why.what()}));
      return;
    }
    pos = find_bundle(f, next, end);
  }
}

}  // namespace provkit::host::kernels
