// Which objects to read, what each carries, and what runs where (provkit/kernels/listing.hpp).
#include "provkit/kernels/listing.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "provkit/error.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::kernels {

const char* const kCudaSections[] = {".nv_fatbin", "__nv_relfatbin", nullptr};
const char* const kHipSections[] = {".hip_fatbin", nullptr};
const char* const kEmbeddedSections[] = {".ldata", ".lrodata", nullptr};

Origin origin_of(const Image& image) {
  return image.relocatable ? Origin::relocatable : image.embedded ? Origin::embedded : Origin::registered;
}

bool RunBudget::take(std::uint64_t bytes) {
  auto have = inflated_.load();
  do {
    if (bytes > budget_.run_inflated || have > budget_.run_inflated - bytes) return false;
  } while (!inflated_.compare_exchange_weak(have, have + bytes));
  return true;
}

Meter::Meter(Library& lib, RunBudget* run)
    : lib_(lib), run_(run), budget_(run ? run->budget() : Budget{}), last_(std::chrono::steady_clock::now()) {}

namespace {
std::string mib(std::uint64_t bytes) {
  return bytes % (1 << 20) ? std::to_string(bytes) + " bytes" : std::to_string(bytes >> 20) + " MiB";
}
}  // namespace

std::uint64_t Meter::inflate_left() const {
  return lib_.spent.inflated >= budget_.file_inflated ? 0 : budget_.file_inflated - lib_.spent.inflated;
}

void Meter::inflate(std::uint64_t bytes) {
  lib_.spent.inflated += bytes;
  if (lib_.spent.inflated > budget_.file_inflated)
    throw OverBudget(util::concat({"the file's budget of ", mib(budget_.file_inflated), " decompressed is spent (",
                                   std::to_string(lib_.spent.inflated), " bytes decompressed)"}));
  if (run_ && !run_->take(bytes))
    throw OverBudget("the run's budget of " + mib(budget_.run_inflated) + " decompressed is spent");
}

void Meter::tick() {
  const auto now = std::chrono::steady_clock::now();
  lib_.spent.inflating += now - last_;
  last_ = now;
  if (lib_.spent.inflating > budget_.file_inflating)
    throw OverBudget("the file's budget of " + std::to_string(budget_.file_inflating.count()) +
                     " ms of decompression is spent");
}

void Meter::entries(std::uint64_t count) {
  const std::uint64_t left = lib_.spent.entries >= budget_.file_entries ? 0 : budget_.file_entries - lib_.spent.entries;
  if (count > left)
    throw OverBudget(util::concat({"a bundle of ", std::to_string(count), " entries passes the file's budget of ",
                                   std::to_string(budget_.file_entries), " (", std::to_string(lib_.spent.entries),
                                   " listed before it)"}));
  lib_.spent.entries += count;
}

bool empty_modules_can_decide(const Library& lib) {
  if (!lib.other.empty()) return false;
  return std::none_of(lib.images.begin(), lib.images.end(),
                      [](const Image& i) { return i.kind == Kind::ptx && !i.relocatable; });
}

Library list_kernels(const fs::path& object, bool kept_as_data, const EnoughSeen& enough, const Sampling& sampling,
                     RunBudget* run, const Spent& already) {
  Library lib;
  lib.path = object;
  lib.spent = already;
  elf::ObjectFile file(object);
  file.advise_random();  // headers megabytes apart: read-ahead would read the payloads
  auto sections = elf::read_sections(file);
  for (const auto& s : sections) {
    for (auto* n = kCudaSections; *n; ++n)
      if (s.name == *n)
        read_fatbins(file, s, lib, false,
                     s.name == ".nv_fatbin" ? registered_fatbins(file, sections, s) : std::vector<std::uint64_t>{});
    for (auto* n = kHipSections; *n; ++n)
      if (s.name == *n) read_offload_bundles(file, s, lib, run);
    for (auto* n = kEmbeddedSections; kept_as_data && *n; ++n)
      if (s.name == *n && !lib.kept_as_data_in_part) read_fatbins(file, s, lib, true, {}, enough, sampling);
  }
  return lib;
}

std::vector<std::uint64_t> registered_fatbins(const elf::ObjectFile& file, const std::vector<elf::Section>& sections,
                                              const elf::Section& fatbin) {
  std::vector<std::uint64_t> out;
  auto table = elf::find_section(sections, ".nvFatBinSegment");
  if (!table || table->size % 24 || table->size > (1u << 24) || !fatbin.address) return out;
  auto bytes = file.read(table->offset, table->size, "the fatbin registration table");
  for (std::size_t i = 0; i + 24 <= bytes.size(); i += 24) {
    std::uint32_t magic;
    std::uint64_t address;
    std::memcpy(&magic, bytes.data() + i, 4);
    std::memcpy(&address, bytes.data() + i + 8, 8);
    if (magic != 0x466243B1 || address < fatbin.address || address - fatbin.address >= fatbin.size) return {};
    out.push_back(fatbin.offset + (address - fatbin.address));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool has_data_sections(const fs::path& object) {
  elf::ObjectFile file(object);
  for (const auto& s : elf::read_sections(file))
    for (auto* n = kEmbeddedSections; *n; ++n)
      if (s.name == *n && s.size) return true;
  return false;
}

std::vector<std::size_t> largest_first(const std::vector<fs::path>& objects) {
  std::vector<std::uintmax_t> sizes(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    std::error_code ec;
    sizes[i] = fs::file_size(objects[i], ec);
    if (ec) sizes[i] = 0;
  }
  std::vector<std::size_t> order(objects.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  return order;
}

std::vector<Listing> list_all(const std::vector<fs::path>& objects, unsigned threads,
                              const std::function<void(Listing&)>& then, RunBudget* run) {
  std::vector<Listing> out(objects.size());
  const auto order = largest_first(objects);
  const auto started = std::chrono::steady_clock::now();
  util::parallel_for(order.size(), threads, [&](std::size_t k) {
    const std::size_t i = order[k];
    // Where a cold run's time goes, per object: when its reads began and ended (each section's bytes are
    // read_fatbins' trace: a thread's own I/O count misses what the side-by-side readers read for it).
    auto ms = [&started] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    };
    const double from = ms();
    try {
      out[i].library = list_kernels(objects[i], false, {}, {}, run);
    } catch (const Error& e) {
      out[i].library.path = objects[i];
      out[i].error = e.what();
      return;
    }
    if (then) then(out[i]);
    util::log::debug("host", [&] {
      const auto& spent = out[i].library.spent;
      return util::concat(
          {"kernels: ", objects[i].string(), ": ", std::to_string(from), "-", std::to_string(ms()), " ms, ",
           std::to_string(out[i].library.images.size()), " images, ", std::to_string(spent.inflated),
           " bytes decompressed (",
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(spent.inflating).count()), " ms), ",
           std::to_string(spent.entries), " bundle entries"});
    });
  });
  return out;
}

namespace {

// Directories read at once by a walk: I/O bound, as the listing's 16.
constexpr unsigned kWalkers = 16;

bool shared_object_name(std::string_view name) {
  auto so = name.find(".so");
  if (so == std::string::npos) return false;
  auto rest = name.substr(so + 3);
  return rest.empty() || rest.front() == '.';
}

// The shared objects below `root`, read by `threads` walkers side by side. Cold, each directory is a read
// whose place is known only from its parent's, so one walk pays the disk's latency once per directory, one
// after another (torch's site-packages has thousands); walkers taking directories from one queue overlap them.
// As recursive_directory_iterator: links to directories are not followed, a link to a regular file counts,
// a directory that may not be read is skipped; any other error is named.
void walk_for_shared_objects(const fs::path& root, unsigned threads, std::vector<fs::path>& found,
                             std::vector<std::string>& unreadable) {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<fs::path> pending{root};
  unsigned busy = 0;
  auto read_one = [](const fs::path& dir, std::vector<fs::path>& dirs, std::vector<fs::path>& files) -> std::string {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return errno == EACCES ? std::string() : dir.string() + ": " + std::strerror(errno);
    const int fd = ::dirfd(d);
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      unsigned char type = e->d_type;
      struct stat st;
      if (type == DT_UNKNOWN && ::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
      if (type == DT_DIR) dirs.push_back(dir / e->d_name);
      else if ((type == DT_REG || type == DT_LNK) && shared_object_name(e->d_name) &&
               (type == DT_REG || (::fstatat(fd, e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))))
        files.push_back(dir / e->d_name);
      errno = 0;
    }
    std::string error = errno ? dir.string() + ": " + std::strerror(errno) : std::string();
    ::closedir(d);
    return error;
  };
  auto walker = [&] {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return !pending.empty() || busy == 0; });
      if (pending.empty()) return;  // nothing queued and no walker that could queue more
      const fs::path dir = std::move(pending.back());
      pending.pop_back();
      ++busy;
      lock.unlock();
      std::vector<fs::path> dirs, files;
      std::string error = read_one(dir, dirs, files);
      lock.lock();
      --busy;
      pending.insert(pending.end(), std::make_move_iterator(dirs.begin()), std::make_move_iterator(dirs.end()));
      found.insert(found.end(), std::make_move_iterator(files.begin()), std::make_move_iterator(files.end()));
      if (!error.empty()) unreadable.push_back(std::move(error));
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(walker);
  walker();
  for (auto& t : pool) t.join();
}

}  // namespace

Collected collect_objects(const std::vector<std::string>& paths, const elf::SearchContext& ctx, bool follow_needed) {
  Collected out;
  std::set<fs::path> seen;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    auto real = fs::canonical(p, ec);
    if (ec) return out.unreadable.push_back(p.string() + ": " + ec.message()), false;
    if (!seen.insert(real).second) return false;
    out.objects.push_back(p);
    return true;
  };
  std::vector<fs::path> roots;
  for (const auto& arg : paths) {
    std::error_code ec;
    auto st = fs::status(arg, ec);
    if (ec || !fs::exists(st)) {
      out.unreadable.push_back(arg + ": " + (ec ? ec.message() : "no such file or directory"));
      continue;
    }
    if (fs::is_directory(st)) {
      ++out.directories;
      std::vector<fs::path> found;
      walk_for_shared_objects(arg, kWalkers, found, out.unreadable);
      std::sort(found.begin(), found.end());
      for (const auto& f : found) add(f);
    } else if (add(arg)) {
      roots.emplace_back(arg);
    }
  }
  if (!follow_needed) return out;
  for (const auto& root : roots) {
    try {
      auto res = elf::resolve_needed(root, ctx);
      for (const auto& e : res.resolved) add(*e.lookup.path);
    } catch (const Error&) {
      // Not an ELF object: list_kernels says so for it.
    }
  }
  return out;
}

std::vector<std::string> distinct_targets(const Library& library, Kind kind, Origin origin) {
  std::vector<const Image*> images;
  for (const auto& i : library.images)
    if (i.kind == kind && origin_of(i) == origin) images.push_back(&i);
  std::sort(images.begin(), images.end(), [](const Image* a, const Image* b) {
    return std::tie(a->arch.arch, a->arch.variant, a->target) < std::tie(b->arch.arch, b->arch.variant, b->target);
  });
  std::vector<std::string> out;
  for (const auto* i : images)
    if (std::find(out.begin(), out.end(), i->target) == out.end()) out.push_back(i->target);
  return out;
}

}  // namespace provkit::kernels
