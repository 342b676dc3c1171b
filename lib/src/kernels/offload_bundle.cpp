// Clang offload bundles in an ELF section (provkit/kernels/listing.hpp), as hipcc and the
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

#include "provkit/error.hpp"
#include "provkit/kernels/listing.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::kernels {

namespace {

// A bundle that is not what its header says: a problem of the library it is in, never a failure of the run
// (an I/O error still is one).
struct Malformed : Error {
  explicit Malformed(const std::string& why) : Error(Reason::check_failed, why) {}
};

constexpr std::string_view kPlainMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::string_view kCompressedMagic = "CCOB";
constexpr std::size_t kMaxTableBytes = 4 << 20;  // a plain bundle's entry table, at most (thousands of ids)
// Decompressed at a time: an entry table of ten targets is under a kilobyte, and each block is charged to the
// file's budget before it is made (64 KiB blocks made rocBLAS-sized files of thousands of bundles spend 64 KiB
// each where 4 KiB holds their tables).
constexpr std::size_t kInflateBlock = 4096;

using detail::at;
using detail::hex;

// The target id of a bundle entry id: what follows the triple.
std::string target_of(const std::string& id) {
  auto gfx = id.rfind("-gfx");
  if (gfx != std::string::npos) return id.substr(gfx + 1);
  auto dash = id.find_last_of('-');
  return dash == std::string::npos ? id : id.substr(dash + 1);
}

// Reads a plain bundle's table from its first bytes as they come (a compressed bundle's are decompressed a
// block at a time): each call goes on from where the last stopped, so a table is read once, however many
// blocks it arrives in. `available`: the bundle's bytes in all. A table that lies throws Malformed; one
// that claims more entries than the file's budget has left throws OverBudget before any is read.
class TableReader {
 public:
  TableReader(std::uint64_t available, bool compressed, const std::string& section, Meter& meter)
      : available_(available), compressed_(compressed), section_(section), meter_(meter) {}

  // Goes on through `head` (the bundle's first bytes; more of them each call): true when the table is whole.
  bool read(std::string_view head) {
    if (!counted_) {
      if (head.size() < kPlainMagic.size() + 8) return false;
      count_ = at<std::uint64_t>(head.data(), kPlainMagic.size());
      if (count_ > available_ / 24)
        throw Malformed("a bundle of " + std::to_string(count_) + " entries cannot fit in " +
                        std::to_string(available_) + " bytes");
      meter_.entries(count_);
      counted_ = true;
      p_ = end_ = kPlainMagic.size() + 8;
    }
    for (; read_ < count_; ++read_) {
      if (head.size() < p_ + 24) return false;
      const auto offset = at<std::uint64_t>(head.data(), p_), size = at<std::uint64_t>(head.data(), p_ + 8),
                 id_len = at<std::uint64_t>(head.data(), p_ + 16);
      if (id_len > 4096) throw Malformed("a bundle entry id of " + std::to_string(id_len) + " bytes");
      if (head.size() < p_ + 24 + id_len) return false;
      std::string id(head.substr(p_ + 24, id_len));
      if (offset > available_ || size > available_ - offset)
        throw Malformed("entry " + id + " (" + std::to_string(size) + " bytes at " + std::to_string(offset) +
                        ") lies beyond the bundle's " + std::to_string(available_) + " bytes");
      end_ = std::max<std::uint64_t>(end_, offset + size);
      p_ += 24 + id_len;
      if (id.rfind("host-", 0) == 0) continue;  // the host's (empty) entry
      Image img;
      img.kind = Kind::code_object;
      img.triple = id;
      img.target = target_of(id);
      img.compressed = compressed_;
      img.section = section_;
      images_.push_back(std::move(img));
    }
    end_ = std::max<std::uint64_t>(end_, p_);
    return whole_ = true;
  }
  // The bundle's size (its furthest entry end) once the table is whole; 0 before.
  std::uint64_t size() const { return whole_ ? end_ : 0; }
  std::vector<Image>& images() { return images_; }

 private:
  std::uint64_t available_;
  bool compressed_;
  const std::string& section_;
  Meter& meter_;
  bool counted_ = false, whole_ = false;
  std::uint64_t count_ = 0, read_ = 0, p_ = 0, end_ = 0;
  std::vector<Image> images_;
};

// Decompresses the start of a compressed bundle's data, a small block at a time (an entry table is a few
// hundred bytes), each block charged to the file's budget (Meter), until `table` is whole or the data ends.
void inflate_start(const elf::ObjectFile& f, std::uint64_t from, std::uint64_t to, std::uint16_t method,
                   TableReader& table, Meter& meter) {
  std::string out;
  std::vector<char> in(std::size_t{16} * 1024), buf(kInflateBlock);
  meter.begin();
  // The block was decompressed: charge it, and say whether the table is whole.
  auto took = [&](std::size_t n) {
    meter.inflate(n);
    meter.tick();
    out.append(buf.data(), n);
    if (table.read(out)) return true;
    if (out.size() >= kMaxTableBytes)
      throw Malformed("its entry table is over " + std::to_string(kMaxTableBytes >> 20) + " MiB");
    return false;
  };
  // A block out may leave more decompressed data pending with all the input taken: the loops go on while
  // a block comes out full, and end when the input is spent and the last block was not.
  if (method == 1) {
    std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> z(ZSTD_createDStream(), ZSTD_freeDStream);
    ZSTD_initDStream(z.get());
    ZSTD_inBuffer ib{in.data(), 0, 0};
    for (;;) {
      if (ib.pos == ib.size && from < to) {
        const std::uint64_t n = std::min<std::uint64_t>(in.size(), to - from);
        f.read_into(in.data(), from, n, "a compressed offload bundle");
        from += n;
        ib = ZSTD_inBuffer{in.data(), n, 0};
      }
      ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
      const auto taken = ib.pos;
      const auto rc = ZSTD_decompressStream(z.get(), &ob, &ib);
      if (ZSTD_isError(rc)) throw Malformed(std::string("zstd: ") + ZSTD_getErrorName(rc));
      if (ob.pos == 0 && ib.pos == taken && ib.pos < ib.size) throw Malformed("zstd: no progress");
      if (took(ob.pos) || rc == 0 || (ob.pos < ob.size && ib.pos == ib.size && from >= to)) return;
    }
  }
  if (method == 0) {
    z_stream z{};
    if (inflateInit(&z) != Z_OK) throw Malformed("zlib: cannot start inflating");
    struct End {
      z_stream* z;
      ~End() { inflateEnd(z); }
    } end{&z};
    for (;;) {
      if (z.avail_in == 0 && from < to) {
        const std::uint64_t n = std::min<std::uint64_t>(in.size(), to - from);
        f.read_into(in.data(), from, n, "a compressed offload bundle");
        from += n;
        z.next_in = reinterpret_cast<Bytef*>(in.data());
        z.avail_in = static_cast<uInt>(n);
      }
      z.next_out = reinterpret_cast<Bytef*>(buf.data());
      z.avail_out = static_cast<uInt>(buf.size());
      const int rc = inflate(&z, Z_NO_FLUSH);
      if ((rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) || (rc == Z_BUF_ERROR && z.avail_in > 0))
        throw Malformed(std::string("zlib: ") + (z.msg ? z.msg : "corrupt data"));
      if (took(buf.size() - z.avail_out) || rc == Z_STREAM_END || (z.avail_out > 0 && z.avail_in == 0 && from >= to))
        return;
    }
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

void read_offload_bundles(const elf::ObjectFile& f, const elf::Section& section, Library& into, RunBudget* run) {
  const std::uint64_t end = section.offset + section.size;
  Meter meter(into, run);
  std::uint64_t pos = find_bundle(f, section.offset, end);
  while (pos + 4 <= end) {
    const std::string where = section.name + " at " + hex(pos);
    char magic[24] = {};
    const std::uint64_t available = end - pos;
    f.read_into(magic, pos, std::min<std::uint64_t>(sizeof magic, available), "an offload bundle");
    std::uint64_t next = 0;
    try {
      if (available >= kPlainMagic.size() && std::string_view(magic, kPlainMagic.size()) == kPlainMagic) {
        TableReader table(available, false, section.name, meter);
        for (std::uint64_t want = 4096;; want *= 2) {
          const auto head = f.read(pos, std::min<std::uint64_t>({want, available, kMaxTableBytes}),
                                   "an offload bundle table");
          if (table.read(head)) break;
          if (head.size() >= available || head.size() >= kMaxTableBytes)
            throw Malformed("its entry table runs past the section");
        }
        next = pos + table.size();
        into.images.insert(into.images.end(), table.images().begin(), table.images().end());
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
        TableReader table(uncompressed, true, section.name, meter);
        inflate_start(f, pos + header, data_end, method, table, meter);
        if (!table.size()) throw Malformed("its decompressed data does not hold the whole entry table");
        into.images.insert(into.images.end(), table.images().begin(), table.images().end());
        // v1 does not say where it ends: the next bundle is found by its magic.
        next = total ? pos + total : pos + header + 1;
      } else {
        next = pos + 4;  // a stray "__CL": look further
      }
    } catch (const Malformed& why) {
      into.problems.push_back(util::concat({where, ": ", why.what()}));
      return;
    } catch (const OverBudget& why) {
      into.problems.push_back(util::concat({where, ": not read: ", why.what()}));
      return;
    }
    pos = find_bundle(f, next, end);
  }
}

}  // namespace provkit::kernels
