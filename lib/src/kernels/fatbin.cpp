// CUDA fatbins in an ELF section (provkit/kernels/listing.hpp): the containers' headers and
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
#include <atomic>
#include <cstring>
#include <optional>
#include <string_view>

#include "provkit/error.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/strings.hpp"

#include "provkit/kernels/listing.hpp"

namespace provkit::kernels {

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint64_t kFlagArchSpecific = 0x100000;
constexpr std::uint64_t kFlagFamily = 0x200000;
constexpr std::uint64_t kFlagZstd = 0x8000;
constexpr std::uint64_t kFlagLz4 = 0x2000;
constexpr std::size_t kEntryHeaderMin = 64;

using detail::at;
using detail::hex;

// Reads a section's headers through one buffer. Cold, each header's place is
// known only from the one before it, and a read costs the disk its latency and
// the pages it touches: on one GPU host's virtual disk about 0.03 ms a read and
// 2.4 ms a MiB. A header is therefore read with the rest of the pages it lies
// in and no more: a header further on in those pages costs nothing, and a
// read never touches a page for a header that may not be there. 4 KiB from
// each header (two pages for most) read 140 MiB of torch's libraries where
// this reads 93, in 7% more reads, and was 5-7% slower; windows of 64 KiB to
// 1 MiB over close headers were slower still (docs/benchmarks-envcheck.md,
// "What bounds a cold run"). A small container is the exception: it is read
// whole (kWholeContainer below).
//
// A section that is all containers back to back (`sequential`: cuFFT's .ldata,
// 278 MB of which 266 MB are containers of ~7 KB) has a header on nearly every
// other page: there the whole section is read in large blocks, the next one
// asked of the kernel (POSIX_FADV_WILLNEED) while this one is parsed, so a
// cold read runs at the disk's bandwidth, not at one small read's latency per
// container. Memory stays at one block.
class HeaderReader {
 public:
  HeaderReader(const elf::ObjectFile& f, std::uint64_t end, bool sequential = false)
      : f_(f), end_(end), sequential_(sequential) {}

  // `length` bytes at `offset` (the file's, within the section), valid until the next call.
  const unsigned char* get(std::uint64_t offset, std::size_t length, const char* what) {
    if (offset >= start_ && offset - start_ + length <= size_) return buf_.data() + (offset - start_);
    // To the end of the page the last byte asked for is in (offsets are the file's, so pages are the disk's).
    std::uint64_t want = sequential_ ? std::max<std::uint64_t>(kBlock, length)
                                     : ((offset + length + kPage - 1) & ~(kPage - 1)) - offset;
    if (end_ > offset && want > end_ - offset) want = std::max<std::uint64_t>(end_ - offset, length);
    if (buf_.size() < want) buf_.resize(want);
    size_ = 0;
    if (sequential_ && offset + want < end_) f_.will_need(offset + want, std::min(kBlock, end_ - offset - want));
    f_.read_into(buf_.data(), offset, want, what);
    start_ = offset;
    size_ = want;
    ++reads_;
    bytes_ += want;
    return buf_.data();
  }
  std::size_t reads() const { return reads_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  static constexpr std::uint64_t kPage = 4096, kBlock = 8 << 20;
  const elf::ObjectFile& f_;
  std::uint64_t end_, start_ = 0, size_ = 0, bytes_ = 0;
  bool sequential_;
  std::size_t reads_ = 0;
  std::vector<unsigned char> buf_;
};

// The next 4-aligned offset (from the section's start) at or after `from`
// where the container magic is; `end` when none.
std::uint64_t find_magic(HeaderReader& r, std::uint64_t start, std::uint64_t from, std::uint64_t end) {
  from = start + ((from - start + 3) & ~std::uint64_t(3));
  // The next container is usually a few bytes on: a small first look, then large ones.
  std::uint64_t want = 256;
  while (from + 4 <= end) {
    const std::uint64_t n = std::min<std::uint64_t>(want, end - from);
    want = std::uint64_t{64} * 1024;
    const unsigned char* block = r.get(from, n, "a fatbin section");
    for (std::uint64_t i = 0; i + 4 <= n; i += 4)
      if (at<std::uint32_t>(block, i) == kFatbinMagic) return from + i;
    from += n & ~std::uint64_t(3);
    if (n < 4) break;
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

void add_other(Library& into, const OtherEntries& e) {
  auto it = std::find_if(into.other.begin(), into.other.end(),
                         [&](const OtherEntries& o) { return o.kind == e.kind && o.arch == e.arch; });
  if (it == into.other.end()) into.other.push_back(e);
  else it->count += e.count;
}

// Threads per library for its containers (the libraries themselves are read 16
// at a time): I/O bound, a cold read waits on the disk.
constexpr unsigned kContainerThreads = 8;
// A container read apart whose extent (to the next one's start) is no larger is
// read whole, its entries' headers with it: one read where there were several
// (cuBLASLt's 2782 containers hold 5737 entries). On the GPU host a read costs
// more than its bytes' share, most of all the first time the machine reads a
// file: the CUDA 13 libraries read in 5,177 reads of 71 MiB instead of 7,478
// of 58, faster on a first read and no slower after it
// (docs/benchmarks-envcheck.md, "The first read of a file").
constexpr std::uint64_t kWholeContainer = 128 << 10;
// Containers read side by side at a time, at most (cuBLASLt has 2782).
constexpr std::size_t kBatch = 4096;
// Threads for a kept-as-data section's windows: independent reads about 1 MiB
// apart in cuFFT's .ldata, where a host that has never read the file pays a
// fetch for each. Read 8 at a time, they made cuFFT the last library of torch's
// listed on one GPU host's first run (505 ms of 566).
constexpr unsigned kWindowThreads = 32;

}  // namespace

namespace {

// A container's 16-byte header at `pos`.
struct ContainerHeader {
  std::uint16_t version = 0, size = 0;
  std::uint64_t entries_size = 0;
  bool fits = false;  // version 1, and it and its entries within the section
};

ContainerHeader container_header(HeaderReader& reader, std::uint64_t pos, std::uint64_t end) {
  const unsigned char* head = reader.get(pos, 16, "a fatbin header");
  ContainerHeader h{at<std::uint16_t>(head, 4), at<std::uint16_t>(head, 6), at<std::uint64_t>(head, 8)};
  h.fits = h.version == 1 && h.size >= 16 && h.size <= end - pos && h.entries_size <= end - pos - h.size;
  return h;
}

// One container at `pos` into `into`: its end, or 0 after a problem (which ends the section's scan).
std::uint64_t read_container(HeaderReader& reader, std::uint64_t pos, std::uint64_t end, const elf::Section& section,
                             bool embedded, Library& into) {
  const bool relocatable = section.name == "__nv_relfatbin";
  const auto head = container_header(reader, pos, end);
  const std::string where = section.name + " at " + hex(pos);
  if (!head.fits) {
    into.problems.push_back(where + ": a fatbin header that does not fit its section (version " +
                            std::to_string(head.version) + ", " + std::to_string(head.entries_size) +
                            " bytes of entries)");
    return 0;
  }
  const std::uint64_t container_end = pos + head.size + head.entries_size;
  std::uint64_t e = pos + head.size;
  while (e + kEntryHeaderMin <= container_end) {
    const unsigned char* h = reader.get(e, kEntryHeaderMin, "a fatbin entry header");
    const auto kind = at<std::uint16_t>(h, 0);
    const auto entry_header = at<std::uint32_t>(h, 4);
    const auto payload = at<std::uint64_t>(h, 8);
    if (entry_header < kEntryHeaderMin || entry_header > container_end - e ||
        payload > container_end - e - entry_header) {
      into.problems.push_back(where + ": an entry at " + hex(e) + " that does not fit its container (" +
                              std::to_string(entry_header) + "-byte header, " + std::to_string(payload) +
                              "-byte payload)");
      return 0;
    }
    if (kind == 1 || kind == 2) {
      into.images.push_back(entry_image(h, section.name));
      auto& img = into.images.back();
      img.relocatable = relocatable;
      img.embedded = embedded;
      img.payload_offset = e + entry_header;
      img.payload_size = payload;
      img.compressed_size = at<std::uint32_t>(h, 16);
      img.uncompressed_size = at<std::uint64_t>(h, 56);
    } else if (!relocatable) {
      const int arch = static_cast<int>(at<std::uint32_t>(h, 28));
      add_other(into, {kind, arch, 1});
    }
    e += entry_header + payload;
  }
  return container_end;
}

// What one container read apart holds, and where the next magic after it is.
struct Part {
  Library found;
  std::uint64_t next = 0;
  bool stopped = false;  // a problem: the scan ends here
};

void append(Library& into, Library& found) {
  into.images.insert(into.images.end(), std::make_move_iterator(found.images.begin()),
                     std::make_move_iterator(found.images.end()));
  into.problems.insert(into.problems.end(), found.problems.begin(), found.problems.end());
  for (const auto& o : found.other) add_other(into, o);
}

// A kept-as-data section looked at as `sampling` says (provkit/kernels/listing.hpp): each window lists the containers
// that start in it (their entries may run past it), side by side. A container that does not parse ends its window
// quietly: a window starts anywhere, and the magic it finds may be data. True when what they found was
// `enough`, and is then in `into`; false, and nothing read, for a section no larger than the windows
// together (the scan reads it whole in one or two large reads).
bool read_windows(const elf::ObjectFile& f, const elf::Section& section, Library& into, const EnoughSeen& enough,
                  const Sampling& sampling) {
  const std::uint64_t start = section.offset, end = section.offset + section.size;
  const std::uint64_t window = std::max<std::uint64_t>(sampling.window, 4096) & ~std::uint64_t(7);
  const std::size_t count = std::max<std::size_t>(sampling.windows, 1);
  if (section.size / window <= count) return false;
  // A stride a multiple of 8 (containers are 8-aligned), more than a window.
  const std::uint64_t stride = (section.size / count) & ~std::uint64_t(7);
  std::vector<Library> in_window(count);
  std::atomic<std::size_t> reads{0};
  std::atomic<std::uint64_t> bytes{0};
  util::parallel_for(count, kWindowThreads, [&](std::size_t i) {
    const std::uint64_t from = start + i * stride, to = std::min(end, from + window);
    HeaderReader own(f, end);
    own.get(from, to - from, "a fatbin section");  // the window in one read; most headers fall in it
    for (auto pos = find_magic(own, start, from, to); pos + 16 <= to;) {
      Library one;
      const auto container_end = read_container(own, pos, end, section, true, one);
      if (!container_end || !one.problems.empty()) break;
      append(in_window[i], one);
      pos = find_magic(own, start, container_end, to);
    }
    reads += own.reads();
    bytes += own.bytes();
  });
  Library found;
  for (auto& one : in_window) append(found, one);
  const bool settled = enough(found.images);
  util::log::debug("host", [&] {
    return f.path().string() + ": " + section.name + ": " + std::to_string(found.images.size()) + " images in " +
           std::to_string(count) + " windows of " + std::to_string(window >> 10) + " KiB, headers in " +
           std::to_string(reads) + " reads of " + std::to_string(bytes >> 10) + " KiB" +
           (settled ? " (enough: the rest left unread)" : " (not enough: read whole)");
  });
  if (!settled) return false;
  append(into, found);
  into.kept_as_data_in_part = true;
  return true;
}

// Where the next `most` containers from `pos` start, each found from the one before by its own header and the
// magic after its end (in the page that end is in, with the next header), up to the first that does not fit:
// the scan meets that one and says why.
std::vector<std::uint64_t> container_chain(HeaderReader& reader, std::uint64_t start, std::uint64_t pos,
                                           std::uint64_t end, std::size_t most) {
  std::vector<std::uint64_t> out;
  while (pos + 16 <= end && out.size() < most) {
    const auto head = container_header(reader, pos, end);
    if (!head.fits) break;
    out.push_back(pos);
    pos = find_magic(reader, start, pos + head.size + head.entries_size, end);
  }
  return out;
}

}  // namespace

void read_fatbins(const elf::ObjectFile& f, const elf::Section& section, Library& into, bool embedded,
                  const std::vector<std::uint64_t>& starts, const EnoughSeen& enough, const Sampling& sampling) {
  const std::uint64_t start = section.offset, end = section.offset + section.size;
  if (embedded && enough && read_windows(f, section, into, enough, sampling)) return;
  HeaderReader reader(f, end, embedded);
  std::uint64_t pos = find_magic(reader, start, start, end);
  // Containers read side by side: each one's chain of entry headers is short, where the whole section's is
  // thousands of reads long, and a cold read waits on the disk. Where they start: the registration table's,
  // else the containers' own headers one after another (one read a container, not one an entry: nccl's
  // __nv_relfatbin is 127 containers of 7 entries). A data section is read in blocks from its start instead.
  // A batch at a time, in the scan's order, so a section of millions of tiny containers costs one batch's memory.
  std::vector<std::uint64_t> side;  // the batch's starts, ascending
  std::vector<Part> parts;          // what each holds
  bool more = !embedded;            // containers past the batch may still be read side by side
  std::size_t taken = 0, apart = 0, batches = 0;
  std::atomic<std::size_t> reads{0};
  std::atomic<std::uint64_t> bytes{0};
  auto next_batch = [&](std::uint64_t from) {
    if (!starts.empty()) {
      const auto first = std::lower_bound(starts.begin(), starts.end(), from);
      side.assign(first, first + static_cast<std::ptrdiff_t>(
                                     std::min<std::size_t>(kBatch, static_cast<std::size_t>(starts.end() - first))));
      more = static_cast<std::size_t>(starts.end() - first) > side.size();
    } else {
      side = container_chain(reader, start, from, end, kBatch);
      more = side.size() == kBatch;
    }
    parts.assign(side.size(), Part{});
    apart += side.size();
    batches += !side.empty();
    util::parallel_for(side.size(), kContainerThreads, [&](std::size_t i) {
      HeaderReader own(f, end);
      // A small container in one read, to the next one's header so the magic after it comes along.
      const std::uint64_t to = i + 1 < side.size() ? std::min(end, side[i + 1] + 16) : end;
      if (to - side[i] <= kWholeContainer) own.get(side[i], to - side[i], "a fatbin container");
      auto container_end = read_container(own, side[i], end, section, embedded, parts[i].found);
      parts[i].stopped = container_end == 0;
      if (container_end) parts[i].next = find_magic(own, start, container_end, end);
      reads += own.reads();
      bytes += own.bytes();
    });
  };
  // The scan's own order decides: a part is taken where the scan comes to its start (the magic after the one
  // before). A container the table does not name is read by the scan itself: cuSOLVER's, cuSPARSE's and
  // cuRAND's .nv_fatbin begin with one.
  while (pos + 16 <= end) {
    auto it = std::lower_bound(side.begin(), side.end(), pos);
    if (it == side.end() && more) {
      next_batch(pos);
      it = std::lower_bound(side.begin(), side.end(), pos);
    }
    if (it != side.end() && *it == pos) {
      auto& part = parts[static_cast<std::size_t>(it - side.begin())];
      append(into, part.found);
      ++taken;
      if (part.stopped) break;
      pos = part.next;
      continue;
    }
    auto container_end = read_container(reader, pos, end, section, embedded, into);
    if (!container_end) break;
    pos = find_magic(reader, start, container_end, end);
  }
  util::log::debug("host", [&] {
    return f.path().string() + ": " + section.name + ": " + std::to_string(into.images.size()) +
           " images so far, headers in " + std::to_string(reads + reader.reads()) + " reads of " +
           std::to_string((bytes + reader.bytes()) >> 10) + " KiB" +
           (embedded ? std::string(" (in blocks)")
                     : util::concat({"; ", std::to_string(taken), " of ", std::to_string(apart),
                                     " containers read side by side in ", std::to_string(batches),
                                     batches == 1 ? " batch (" : " batches (",
                                     starts.empty() ? "found by their headers" : "registered", ")"}));
  });
}

namespace {

// The number of .text.<kernel> sections of a cubin (an ELF object) in `elf`; nullopt when it does not parse.
std::optional<std::size_t> text_sections(std::string_view elf) {
  if (elf.size() < 64 ||
      elf.compare(0, 4,
                  "\x7f"
                  "ELF") != 0 ||
      elf[4] != 2)
    return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(elf.data());
  const auto shoff = at<std::uint64_t>(p, 0x28);
  const auto shentsize = at<std::uint16_t>(p, 0x3a), shnum = at<std::uint16_t>(p, 0x3c),
             shstrndx = at<std::uint16_t>(p, 0x3e);
  if (shentsize != 64 || shoff > elf.size() || std::uint64_t(shnum) * 64 > elf.size() - shoff || shstrndx >= shnum)
    return std::nullopt;
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

void count_cubin_kernels(Library& lib, const std::function<bool(const Image&)>& wanted, RunBudget* run,
                         bool until_kernels) {
  std::optional<elf::ObjectFile> file;
  Meter meter(lib, run);
  std::string packed, out;  // reused: one buffer for every cubin, never one per cubin
  // The uncompressed ones first: they cost no decompression, and one with kernels may end the count.
  std::vector<Image*> order;
  for (auto& img : lib.images)
    if (img.kind == Kind::cubin && !img.kernel_count && wanted(img)) order.push_back(&img);
  std::stable_partition(order.begin(), order.end(), [](const Image* i) { return !i->compressed; });
  // One cubin's kernels into `img`; nothing when it cannot be read (it then counts as carrying kernels).
  auto count_one = [&](Image& img) {
    if (!file) file.emplace(lib.path);
    if (!img.compressed) {
      packed.resize(img.payload_size);
      file->read_into(packed.data(), img.payload_offset, packed.size(), "a cubin");
      img.kernel_count = text_sections(packed);
      return;
    }
    // zstd only (flag 0x8000; an LZ4 payload is left unread), and bounded.
    if (img.compressed_size == 0 || img.compressed_size > img.payload_size || img.uncompressed_size == 0 ||
        img.uncompressed_size > (64u << 20))
      return;
    packed.resize(img.compressed_size);
    file->read_into(packed.data(), img.payload_offset, packed.size(), "a compressed cubin");
    // What the frame itself says it holds, when it says, else what the entry header claims: no more is
    // decompressed, and only when it fits what is left of the file's budget.
    const auto frame = ZSTD_getFrameContentSize(packed.data(), packed.size());
    if (frame == ZSTD_CONTENTSIZE_ERROR) return;
    const std::uint64_t size = frame == ZSTD_CONTENTSIZE_UNKNOWN
                                   ? img.uncompressed_size
                                   : std::min<std::uint64_t>(frame, img.uncompressed_size);
    if (size > meter.inflate_left())
      throw OverBudget(util::concat({"a cubin of ", std::to_string(size), " bytes passes the file's budget (",
                                     std::to_string(lib.spent.inflated), " bytes decompressed before it)"}));
    if (out.size() < size) out.resize(size);
    meter.begin();
    const auto n = ZSTD_decompress(out.data(), size, packed.data(), packed.size());
    meter.inflate(ZSTD_isError(n) ? size : n);
    meter.tick();
    if (!ZSTD_isError(n)) img.kernel_count = text_sections(std::string_view(out.data(), n));
  };
  for (Image* img : order) {
    try {
      count_one(*img);
    } catch (const OverBudget& why) {
      lib.problems.push_back(
          util::concat({img->section, " at ", hex(img->payload_offset), ": cubins left uncounted: ", why.what()}));
      return;
    } catch (const Error&) {}
    if (until_kernels && img->kernel_count != std::size_t(0)) return;
  }
}

}  // namespace provkit::kernels
