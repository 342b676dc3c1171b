// libFuzzer target: a wheel archive (provkit::wheels::unpack_wheel through
// libarchive), with small unpack limits so one input costs little. Any input
// either unpacks or is refused with provkit::Error; whatever happens, nothing
// appears outside the target directory, nothing there is a link, and no more
// than the limit is written.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "provkit/error.hpp"
#include "provkit/wheels/zip.hpp"

namespace fs = std::filesystem;

namespace {
// One scratch directory per process, removed when libFuzzer exits (a plain
// array, so it outlives every static destructor the exit handler may follow).
char work_template[] = "/tmp/provkit-fuzz-wheel-XXXXXX";

const fs::path& work_dir() {
  static const fs::path work = [] {
    if (!::mkdtemp(work_template)) std::abort();
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(work_template, ec);
    });
    return fs::path(work_template);
  }();
  return work;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& work = work_dir();
  const fs::path wheel = work / "w-1.0-py3-none-any.whl", out = work / "out";
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out);
  {
    std::ofstream f(wheel, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  provkit::wheels::UnpackLimits limits;
  limits.max_total_bytes = 1 << 20;
  limits.max_entries = 2000;
  limits.ratio_applies_above = 64 << 10;
  try {
    auto w = provkit::wheels::unpack_wheel(wheel, out, limits);
    if (w.dist_info.empty()) std::abort();
  } catch (const provkit::Error&) {
    // refused: fine, as long as nothing escaped (below)
  }
  // Only the wheel and the target directory in the work directory; nothing
  // under the target but directories and regular files, within the limit.
  for (auto& e : fs::directory_iterator(work))
    if (e.path() != wheel && e.path() != out) std::abort();
  std::uintmax_t total = 0;
  for (auto it = fs::recursive_directory_iterator(out); it != fs::recursive_directory_iterator(); ++it) {
    auto st = it->symlink_status();
    if (fs::is_symlink(st)) std::abort();
    if (fs::is_regular_file(st)) total += it->file_size();
    else if (!fs::is_directory(st)) std::abort();
  }
  if (total > limits.max_total_bytes) std::abort();
  return 0;
}
