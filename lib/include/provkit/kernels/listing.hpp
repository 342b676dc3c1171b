#pragma once
// The GPU kernels a library carries, read from its ELF sections without a
// toolkit and without running anything: CUDA fatbins (.nv_fatbin,
// __nv_relfatbin, as cuobjdump --list-elf --list-ptx lists them) and clang
// offload bundles (.hip_fatbin, plain or CCOB-compressed, as
// clang-offload-bundler --list does); and whether any of it runs on a GPU.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "provkit/elf/elf.hpp"
#include "provkit/elf/object_file.hpp"
#include "provkit/elf/sections.hpp"
#include "provkit/error.hpp"
#include "provkit/gpucode/cuda_arch.hpp"

namespace provkit::kernels {

namespace fs = std::filesystem;

enum class Kind { cubin, ptx, code_object };

// One image: a CUDA cubin or PTX entry of a fatbin, or one device code
// object of an offload bundle.
struct Image {
  Kind kind = Kind::cubin;
  std::string target;        // "sm_90a", "compute_90", "gfx90a:xnack-"
  gpucode::ArchTarget arch;  // CUDA images: 9.0 with variant 'a', ptx for PTX
  std::string ptx_isa;       // PTX: its ISA version, "9.0"
  std::string triple;        // code objects: "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"
  bool compressed = false;   // the entry (or its whole bundle) is compressed
  std::string section;       // ".nv_fatbin"
  // __nv_relfatbin: relocatable device code for a later device link (nvlink,
  // nvJitLink); the runtime does not load it as it is, and cuobjdump does not
  // list it. Listed, never counted as running.
  bool relocatable = false;
  // .ldata / .lrodata: fatbins a library keeps as data and loads itself
  // (cuModuleLoadData; cuFFT keeps ~24000 there). They run; cuobjdump does not list them.
  bool embedded = false;
  // Where its payload is in the file, and its sizes (0 when not compressed).
  std::uint64_t payload_offset = 0, payload_size = 0, compressed_size = 0, uncompressed_size = 0;
  // A cubin's kernel count (its .text.* sections), read only when asked
  // (count_cubin_kernels): nullopt when not read or not readable.
  std::optional<std::size_t> kernel_count;
};

// Which images: those the CUDA runtime registers (.nv_fatbin, the HIP bundle),
// those of __nv_relfatbin, or those a library keeps as data.
enum class Origin { registered, relocatable, embedded };
Origin origin_of(const Image& image);

// Fatbin entries of a kind that is neither cubin (2) nor PTX (1), by kind and arch.
struct OtherEntries {
  std::uint16_t kind = 0;
  int arch = 0;  // 90
  std::size_t count = 0;
};

// What reading one file may cost where a few bytes of it can ask for far more work: bytes decompressed
// (offload bundles' tables and zstd cubins together), bundle entries listed (a table claims as many as it
// likes), and time spent decompressing; and the bytes one run may decompress over all its files. A file
// past a budget is listed as far as it was read, with a problem naming the budget. Fatbin entries are
// not counted here: each is a header of at least 64 bytes in the file, never decompressed.
struct Budget {
  std::uint64_t file_inflated = std::uint64_t{64} << 20;
  std::size_t file_entries = std::size_t{1} << 17;  // ~300 bytes of memory each
  std::chrono::milliseconds file_inflating{10000};
  std::uint64_t run_inflated = std::uint64_t{1} << 30;
};

// One run's budget and what its files have decompressed, shared by the threads reading them.
class RunBudget {
 public:
  explicit RunBudget(const Budget& budget = {}) : budget_(budget) {}
  const Budget& budget() const { return budget_; }
  // Takes `bytes` from the run's budget: false, and nothing taken, when that would pass it.
  bool take(std::uint64_t bytes);
  std::uint64_t inflated() const { return inflated_.load(); }

 private:
  Budget budget_;
  std::atomic<std::uint64_t> inflated_{0};
};

// What reading one file has spent (Library::spent): a second look at the file (its kept-as-data
// sections, its cubins' kernels) draws on the same budget.
struct Spent {
  std::uint64_t inflated = 0;                       // bytes decompressed
  std::size_t entries = 0;                          // offload bundle entries listed
  std::chrono::steady_clock::duration inflating{};  // time spent decompressing
};

// What one object file carries. `problems`: containers that could not be
// read to their end ("__nv_relfatbin at 0x2e50: ..."); what came before them is listed.
struct Library {
  fs::path path;
  std::vector<Image> images;
  std::vector<std::string> problems;
  std::vector<OtherEntries> other;  // of the loadable sections (not __nv_relfatbin)
  // The kept-as-data sections were looked at in windows only (Sampling), and `enough` (list_kernels) said
  // what they held settles every verdict: the kept-as-data images are those the windows found.
  bool kept_as_data_in_part = false;
  Spent spent;
  bool has_device_code() const { return !images.empty(); }
};

// A budget passed (Budget): the sentence says which. Reading the file stops; what was read is kept.
struct OverBudget : Error {
  explicit OverBudget(const std::string& why) : Error(Reason::check_failed, why) {}
};

// Charges one file's work to its budget (in `lib.spent`) and to the run's (nullptr: the file's alone).
class Meter {
 public:
  Meter(Library& lib, RunBudget* run);
  // Charges `bytes` just decompressed: throws OverBudget once the file's or the run's budget is passed
  // (by at most the one block that passed it: callers check inflate_left() before a large one).
  void inflate(std::uint64_t bytes);
  // Decompression starts now; tick(): the time since begin() or the last tick() is spent decompressing,
  // and throws OverBudget once the file's budget of time is passed.
  void begin() { last_ = std::chrono::steady_clock::now(); }
  void tick();
  // `count` bundle entries about to be listed: throws OverBudget when they would pass the file's budget.
  void entries(std::uint64_t count);
  std::uint64_t inflate_left() const;

 private:
  Library& lib_;
  RunBudget* run_;
  Budget budget_;
  std::chrono::steady_clock::time_point last_;
};

// Asked once per kept-as-data section, with the images its windows found (Sampling): true when they settle
// every verdict, so the rest of the section stays unread; false, and the section is read whole.
using EnoughSeen = std::function<bool(const std::vector<Image>& images)>;

// How a kept-as-data section is looked at before it is read whole: `windows` reads of `window` bytes spread
// evenly over it, side by side, each listing the containers that start in it. cuFFT's 278 MB .ldata keeps
// its modules grouped by arch, PTX for compute_75 to compute_90 first and its sm_90 cubins 154 MiB in, so a
// scan from the start reads 160 MiB before an H200's verdict is settled, and 256 windows of 32 KiB (8 MiB)
// settle it. A section no larger than the windows together is read whole by the scan (one or two large reads).
struct Sampling {
  std::uint64_t window = 32 << 10;
  std::size_t windows = 256;
};

// The sections read, in this order.
extern const char* const kCudaSections[];      // .nv_fatbin, __nv_relfatbin, .nvFatBinSegment is only pointers
extern const char* const kHipSections[];       // .hip_fatbin
extern const char* const kEmbeddedSections[];  // .ldata, .lrodata: scanned for fatbins kept as data

// Fatbin containers (magic 0xBA55ED50) in [offset, offset + size) of `file`:
// their 16-byte headers and each entry's header, never a payload.
// `embedded`: a data section, where fatbins sit among other data (the whole
// section is read for their magic); a header that does not fit ends the scan
// quietly (the magic was data). `starts`: the file offsets of the containers
// the runtime registers (registered_fatbins), ascending; they are read side by
// side, the listing the same as the scan's.
// `enough` (embedded sections only): the section is first looked at as `sampling` says, and read whole
// only when what the windows found is not enough (EnoughSeen).
void read_fatbins(const elf::ObjectFile& file, const elf::Section& section, Library& into, bool embedded = false,
                  const std::vector<std::uint64_t>& starts = {}, const EnoughSeen& enough = {},
                  const Sampling& sampling = {});
// The file offsets of the containers in `fatbin` (.nv_fatbin) that
// `.nvFatBinSegment`'s wrappers (u32 magic 0x466243B1, u32 version, u64
// address of the fatbin, u64) point at, ascending; empty when the table is
// absent or its addresses are not in the file (left to the dynamic linker).
std::vector<std::uint64_t> registered_fatbins(const elf::ObjectFile& file, const std::vector<elf::Section>& sections,
                                              const elf::Section& fatbin);
// Offload bundles (__CLANG_OFFLOAD_BUNDLE__ or CCOB) in a section: the
// uncompressed bundle's entry table; of a compressed one, only as much of its
// decompressed start as holds that table.
// Each bundle's decompression is charged to `into`'s budget (Meter) a small block at a time.
void read_offload_bundles(const elf::ObjectFile& file, const elf::Section& section, Library& into,
                          RunBudget* run = nullptr);

// One object's kernels from its section table. Throws provkit::Error
// (check_failed) naming the file when it is not a readable ELF object.
// `kept_as_data`: also scan .ldata/.lrodata, which reads those sections whole
// (cuFFT's is 278 MB, half of what a cold look at torch's site-packages reads):
// callers ask for it only when the registered code does not run on a GPU, and
// with `enough` look at them in windows first (Sampling), reading one whole
// only when what its windows hold does not settle the verdicts.
// `run`: the run's budget (nullptr: the file's alone); `already`: what earlier looks at it spent.
Library list_kernels(const fs::path& object, bool kept_as_data = false, const EnoughSeen& enough = {},
                     const Sampling& sampling = {}, RunBudget* run = nullptr, const Spent& already = {});
// Reads the section table of each cubin in `library` that `wanted` selects
// (decompressing a zstd payload), to count its kernels: a cubin with none
// is an empty module, which needs no GPU. LZ4 payloads stay unread. The uncompressed cubins are read
// first, then the zstd ones through one reused buffer, each decompressed only when its frame's size fits
// what is left of the budget (Meter); past it, the rest stay uncounted and a problem says why.
// `until_kernels`: stop at the first cubin that holds kernels (or cannot be read): from then on the library
// carries kernels, and no verdict can rest on its cubins being empty modules.
void count_cubin_kernels(Library& library, const std::function<bool(const Image&)>& wanted, RunBudget* run = nullptr,
                         bool until_kernels = false);
// Whether counting kernels (count_cubin_kernels) can turn an NVIDIA FAIL into "no kernels": only when all
// the library registers is cubins. PTX, or entries of another kind, carry kernels whatever the cubins
// hold, so the headers settle it and nothing need be decompressed.
bool empty_modules_can_decide(const Library& library);
// Whether the object has a section that list_kernels(..., true) would scan.
bool has_data_sections(const fs::path& object);

// The objects `paths` name: files as they are, directories walked for shared
// objects (*.so, *.so.N), each file once (by its real path); with
// `follow_needed`, the DT_NEEDED closure of each file named directly, as the
// loader would resolve it. `unreadable`: "PATH: why" for what could not be read.
struct Collected {
  std::vector<fs::path> objects;
  std::vector<std::string> unreadable;
  std::size_t directories = 0;
};
Collected collect_objects(const std::vector<std::string>& paths, const elf::SearchContext& ctx,
                          bool follow_needed = true);

// Distinct targets of a kind, in arch order: {"sm_75", "sm_80", "sm_90a"};
// the loadable images, or with `relocatable` those of __nv_relfatbin.
std::vector<std::string> distinct_targets(const Library& library, Kind kind, Origin origin = Origin::registered);

// The kernels of many objects, read in parallel (the reads are scattered
// small preads; a cold page cache answers them faster many at a time), the
// largest files first (the longest reads start at once, not last), listed
// in the order given. `then`, when set, runs on each listing read without
// error, on the thread that read it (so a second look at one file, such as
// its .ldata, overlaps the reads of the others). A file that cannot be read
// comes back with `error` set.
struct Listing {
  Library library;
  std::string error;
};
std::vector<Listing> list_all(const std::vector<fs::path>& objects, unsigned threads,
                              const std::function<void(Listing&)>& then = {}, RunBudget* run = nullptr);
// The order list_all reads `objects` in: indices, the largest file first (a
// file whose size cannot be read counts as empty), ties in the order given.
std::vector<std::size_t> largest_first(const std::vector<fs::path>& objects);

}  // namespace provkit::kernels
