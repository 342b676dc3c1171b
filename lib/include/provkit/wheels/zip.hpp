#pragma once
// Wheel archives through libarchive: streaming unpack with every file hashed
// and checked against the wheel's RECORD, and packing for `capture`.
// Unsafe entries (.., absolute paths, links, duplicates, a name used both as a
// file and as a directory, a second .dist-info) and absurd sizes are refused
// from the central directory, before a byte is written.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "provkit/util/beneath.hpp"

struct archive;

namespace provkit::wheels {

// libarchive's message for the last error on an archive, never NULL; shared by
// every reader of archives (wheels, Python install tarballs).
std::string archive_error(archive* a);

namespace fs = std::filesystem;

struct UnpackedFile {
  std::string path;  // relative, '/'-separated, as in the wheel
  std::string hash;  // "sha256=..." of the bytes written
  std::uint64_t size = 0;
  bool executable = false;
};

struct UnpackedWheel {
  std::string dist_info;                     // "name-1.0.dist-info"
  std::vector<UnpackedFile> files;           // every regular file, in archive order
  std::vector<std::string> record_problems;  // RECORD mismatches (empty when clean)
};

// What one wheel may unpack to. The largest real wheels (CUDA libraries, torch)
// unpack to a few GiB at ratios under 10; a wheel past these is a bomb or a
// mistake, and is refused before it can fill the disk.
struct UnpackLimits {
  std::uint64_t max_total_bytes = 32ull << 30;  // sum of the uncompressed sizes
  std::uint64_t max_entries = 500000;
  double max_ratio = 100;                           // uncompressed total / wheel file size
  std::uint64_t ratio_applies_above = 64ull << 20;  // small wheels may compress very well
  // Not a limit: a wheel's members are inflated side by side in parts, a member this large or larger in a
  // part of its own and smaller ones grouped up to this many declared bytes, so that torch's or a CUDA
  // library's few GB are not one stream of inflate, hash and write.
  std::uint64_t part_bytes = 64ull << 20;
};

// Unpacks `wheel` into the empty directory `dest`, its parts side by side, largest first; each file's
// write-back is started as soon as it is written. Throws Error(check_failed)
// naming the wheel and entry for unsafe entries, sizes past `limits` (declared
// ones before writing, actual ones while streaming) or an unreadable archive;
// RECORD mismatches are returned for the caller to judge.
UnpackedWheel unpack_wheel(const fs::path& wheel, const fs::path& dest, const UnpackLimits& limits = {});

// The same in steps, for a caller that unpacks many wheels on one pool of threads, every wheel's parts
// largest first: a GB member started late, or sharing the cores with a hundred other parts, finishes alone
// long after the rest. The constructor judges the central directory (the refusals above, before a byte is
// written) and makes the directories; each part is then run once, on any thread; finish() (after every part)
// checks the files against RECORD.
class WheelUnpack {
 public:
  WheelUnpack(const fs::path& wheel, const fs::path& dest, const UnpackLimits& limits = {});
  ~WheelUnpack();
  WheelUnpack(const WheelUnpack&) = delete;
  WheelUnpack& operator=(const WheelUnpack&) = delete;

  std::size_t parts() const;
  std::uint64_t part_size(std::size_t part) const;  // the declared bytes of its members
  void run_part(std::size_t part);
  UnpackedWheel finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Every part of every one of `unpacks`, side by side on up to `threads` threads, largest first.
void run_parts(const std::vector<WheelUnpack*>& unpacks, unsigned threads);

// One file of a wheel being packed, stored under `name`: the bytes of the file `source` (opened once, below
// the directory `below` when that is set: util::Root, no link on the way, a regular file), or `content`
// when source is empty.
struct PackEntry {
  std::string name;
  fs::path source;
  std::string content;
  bool executable = false;
  fs::path below{};
};
// Writes a deflated zip of `entries` to `out` (atomically: temporary then rename). With `record_name`, a
// last member of that name holds the RECORD of every entry: the hash and size of the bytes packed, read in
// the one pass that packs them, so RECORD describes exactly what the wheel holds even if a source file
// changes meanwhile.
void pack_wheel(const fs::path& out, const std::vector<PackEntry>& entries, const std::string& record_name = {});
// The same, written below `root` (`out` lies below it): the temporary created O_EXCL beside `out` and renamed
// over it, no link followed in any directory on the way (util::Root), so a wheel named from outside data
// cannot land anywhere else.
void pack_wheel(const util::Root& root, const fs::path& out, const std::vector<PackEntry>& entries,
                const std::string& record_name = {});

// Reads one member of a zip into memory (small metadata files).
std::string read_zip_member(const fs::path& zip, const std::string& name);

// The RECORD a wheel carries: the member "<dist_info>/RECORD" of its one top-level .dist-info directory,
// read without unpacking anything else. It is what the wheel says its files are (the wheel's own claim:
// unpack_wheel is what checks it against the bytes). nullopt when the wheel has no such member, or more than
// one .dist-info directory holds one; a member over `max_bytes` is refused.
struct WheelRecord {
  std::string dist_info;  // "name-1.0.dist-info"
  std::string text;
};
std::optional<WheelRecord> read_wheel_record(const fs::path& wheel, std::size_t max_bytes);

}  // namespace provkit::wheels
