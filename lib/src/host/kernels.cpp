// Which objects to read, what each carries, and what runs where (kernels.hpp).
#include "kernels.hpp"

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
#include "rocm.hpp"

namespace provkit::host::kernels {

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

std::optional<cudacompat::Version> cuda_for_ptx_isa(const std::string& isa) {
  auto v = cudacompat::parse_version(isa);
  if (!v) return std::nullopt;
  // From the PTX ISA's release notes: each toolkit release and the ISA it introduced.
  static const std::map<std::pair<int, int>, cudacompat::Version> table = {
      {{6, 0}, {9, 0}},  {{6, 1}, {9, 1}},  {{6, 2}, {9, 2}},  {{6, 3}, {10, 0}}, {{6, 4}, {10, 1}}, {{6, 5}, {10, 2}},
      {{7, 0}, {11, 0}}, {{7, 1}, {11, 1}}, {{7, 2}, {11, 2}}, {{7, 3}, {11, 3}}, {{7, 4}, {11, 4}}, {{7, 5}, {11, 5}},
      {{7, 6}, {11, 6}}, {{7, 7}, {11, 7}}, {{7, 8}, {11, 8}}, {{8, 0}, {12, 0}}, {{8, 1}, {12, 1}}, {{8, 2}, {12, 2}},
      {{8, 3}, {12, 3}}, {{8, 4}, {12, 4}}, {{8, 5}, {12, 5}}, {{8, 6}, {12, 7}}, {{8, 7}, {12, 8}}, {{8, 8}, {12, 9}},
      {{9, 0}, {13, 0}}, {{9, 1}, {13, 1}}, {{9, 2}, {13, 2}},
  };
  auto it = table.find({v->major, v->minor});
  if (it == table.end()) return std::nullopt;
  return it->second;
}

namespace {

// LLVM's generic targets (AMDGPUUsage): the processors each one loads on.
const std::map<std::string, std::vector<std::string>>& generic_targets() {
  static const std::map<std::string, std::vector<std::string>> t = {
      {"gfx9-generic", {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
      {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}},
      {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
      {"gfx10-3-generic", {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"}},
      {"gfx11-generic", {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
      {"gfx12-generic", {"gfx1200", "gfx1201"}},
  };
  return t;
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

bool code_object_runs_on(const std::string& target_id, const std::string& gfx) {
  const auto processor = target_id.substr(0, target_id.find(':'));
  if (processor == gfx) return true;
  auto g = generic_targets().find(processor);
  return g != generic_targets().end() && std::find(g->second.begin(), g->second.end(), gfx) != g->second.end();
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

namespace {

// Does this cubin or PTX run on `cc`? The rules of cudacompat::runs_on, with
// family ('f') PTX kept within its family.
bool cuda_runs(const Image& i, cudacompat::Version cc) {
  if (i.arch.ptx && i.arch.variant == 'f') return i.arch.arch.major == cc.major && i.arch.arch.minor <= cc.minor;
  return cudacompat::runs_on(i.arch, cc);
}

}  // namespace

bool cubin_runs_on(const Image& image, const Gpu& gpu) {
  return image.kind == Kind::cubin && !image.relocatable && gpu.cc && cudacompat::runs_on(image.arch, *gpu.cc);
}

namespace {

std::string carries_text(const Library& lib, bool amd) {
  std::vector<std::string> parts;
  if (amd) {
    auto objects = distinct_targets(lib, Kind::code_object);
    if (!objects.empty()) parts.push_back("code objects for " + join(objects));
  } else {
    auto cubins = distinct_targets(lib, Kind::cubin), ptx = distinct_targets(lib, Kind::ptx);
    if (!cubins.empty()) parts.push_back("cubins " + join(cubins));
    if (!ptx.empty()) parts.push_back("PTX " + join(ptx));
    auto kept_cubins = distinct_targets(lib, Kind::cubin, Origin::embedded),
         kept_ptx = distinct_targets(lib, Kind::ptx, Origin::embedded);
    if (!kept_cubins.empty()) parts.push_back("kept as data cubins " + join(kept_cubins));
    if (!kept_ptx.empty()) parts.push_back("kept as data PTX " + join(kept_ptx));
    if (cubins.empty() && ptx.empty() && !distinct_targets(lib, Kind::cubin, Origin::relocatable).empty())
      parts.push_back("only relocatable device code (__nv_relfatbin) " +
                      join(distinct_targets(lib, Kind::cubin, Origin::relocatable)));
  }
  return parts.empty() ? "nothing for this vendor's GPUs" : join(parts, " and ");
}

// The code object that loads on an AMD GPU: one whose processor is the GPU's
// and whose features (xnack, sramecc) its modes allow; else the closest miss.
Verdict judge_amd(const Library& lib, const Gpu& gpu) {
  Verdict v;
  rocm::AmdGpu device;
  device.gfx_target = gpu.gfx;
  device.xnack = gpu.xnack;
  device.sramecc = gpu.sramecc;
  const Image* unknown = nullptr;
  std::string unknown_why, wrong_why;
  for (const auto& i : lib.images) {
    if (i.kind != Kind::code_object) continue;
    const auto m = rocm::match_target(i.target, device);
    using M = rocm::TargetMatch::Verdict;
    if (m.verdict == M::loads) {
      v.status = check::Status::pass;
      v.via = i.target;
      v.reason = "runs its " + i.target + " code object on " + gpu.label;
      return v;
    }
    if (m.verdict == M::unknown_mode && !unknown) unknown = &i, unknown_why = m.why;
    if (m.verdict == M::wrong_mode && wrong_why.empty()) wrong_why = i.target + ": " + m.why;
  }
  if (unknown) {
    v.status = check::Status::warn;
    v.via = unknown->target;
    v.reason = "only " + unknown->target + " is for " + gpu.label +
               "'s processor, and it loads only in the mode it names: " + unknown_why;
    return v;
  }
  v.status = check::Status::fail;
  v.reason = "nothing in it runs on " + gpu.label + ": it carries " + carries_text(lib, true);
  if (!wrong_why.empty()) v.reason += " (" + wrong_why + ")";
  return v;
}

}  // namespace

Verdict judge(const Library& lib, const Gpu& gpu, int driver_cuda) {
  Verdict v;
  const bool amd = !gpu.gfx.empty();
  bool carries = !amd && !lib.other.empty();
  std::size_t empty_modules = 0;
  for (const auto& i : lib.images) {
    if (!amd && i.kind == Kind::cubin && i.kernel_count == std::size_t(0)) {
      empty_modules += !i.relocatable;
      continue;  // an empty module: no kernel in it needs a GPU
    }
    carries |= amd ? i.kind == Kind::code_object : (i.kind != Kind::code_object && !i.relocatable);
  }
  if (!carries && empty_modules) {
    v.status = check::Status::pass;
    v.via = "no kernels";
    v.reason = "carries no kernels for " + gpu.label + " to run: its " + std::to_string(empty_modules) + " cubin" +
               (empty_modules > 1 ? "s are empty modules" : " is an empty module") + " (no .text sections)";
    return v;
  }
  if (!carries) {
    v.reason = "carries no " + std::string(amd ? "AMD" : "CUDA") + " kernels";
    return v;
  }
  if (amd) return judge_amd(lib, gpu);
  if (!gpu.cc) {
    v.reason = "the compute capability of " + gpu.label + " is unknown";
    return v;
  }
  const Image* best_cubin = nullptr;
  const Image* best_ptx = nullptr;
  const Image* too_new_ptx = nullptr;
  const auto driver = cudacompat::from_cuda_int(driver_cuda);
  for (const auto& i : lib.images) {
    if (i.kind == Kind::code_object || i.relocatable || i.kernel_count == std::size_t(0) || !cuda_runs(i, *gpu.cc))
      continue;
    if (i.kind == Kind::cubin) {
      if (!best_cubin || i.arch.arch > best_cubin->arch.arch) best_cubin = &i;
      continue;
    }
    auto needs = cuda_for_ptx_isa(i.ptx_isa);
    if (driver_cuda && needs && driver < *needs) {
      if (!too_new_ptx) too_new_ptx = &i;
      continue;
    }
    if (!best_ptx || i.arch.arch > best_ptx->arch.arch) best_ptx = &i;
  }
  if (best_cubin) {
    v.status = check::Status::pass;
    v.via = best_cubin->target;
    v.reason = "runs its " + best_cubin->target + " cubins on " + gpu.label;
    return v;
  }
  if (best_ptx) {
    auto needs = cuda_for_ptx_isa(best_ptx->ptx_isa);
    v.status = check::Status::warn;
    v.via = best_ptx->target + " (PTX ISA " + best_ptx->ptx_isa + ")";
    v.reason = "only PTX runs on " + gpu.label + ": " + best_ptx->target + " (ISA " + best_ptx->ptx_isa +
               (needs ? ", which needs a driver for CUDA " + needs->str() + " or newer" : "") +
               (driver_cuda ? "; this driver supports CUDA " + driver.str() : "") +
               ") is JIT-compiled by the driver at first start";
    return v;
  }
  // Entries of a kind neither cuobjdump nor this reader knows, built for this
  // GPU's major: what they are is unknown, so this is no proof of failure.
  std::size_t unknown = 0;
  int unknown_kind = 0;
  for (const auto& o : lib.other)
    if (o.arch / 10 == gpu.cc->major && o.arch % 10 <= gpu.cc->minor) unknown += o.count, unknown_kind = o.kind;
  if (unknown) {
    v.status = check::Status::warn;
    v.via = "kind " + std::to_string(unknown_kind);
    v.reason = "no cubin or PTX in it runs on " + gpu.label + " (it carries " + carries_text(lib, false) + "), but " +
               std::to_string(unknown) + " fatbin entries of kind " + std::to_string(unknown_kind) +
               " (neither cubin nor PTX: cuobjdump does not list them) are built for sm_" +
               std::to_string(gpu.cc->major) + "X";
    return v;
  }
  v.status = check::Status::fail;
  v.reason = "nothing in it runs on " + gpu.label + ": it carries " + carries_text(lib, false);
  if (too_new_ptx) {
    auto needs = cuda_for_ptx_isa(too_new_ptx->ptx_isa);
    v.reason += "; its " + too_new_ptx->target + " PTX (ISA " + too_new_ptx->ptx_isa + ") needs a driver for CUDA " +
                (needs ? needs->str() : "?") + ", this one supports " + driver.str();
  }
  return v;
}

}  // namespace provkit::host::kernels
