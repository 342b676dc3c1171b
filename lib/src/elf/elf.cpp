#include "provkit/elf/elf.hpp"

#include <elf.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "provkit/elf/object_file.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/paths.hpp"

namespace provkit::elf {

std::optional<Identity> read_identity(const fs::path& path) {
  std::string why;
  util::Fd fd = detail::open_regular_file(path, why);
  if (!fd) return std::nullopt;
  unsigned char hdr[sizeof(Elf64_Ehdr)] = {};
  std::size_t got = 0;
  while (got < sizeof hdr) {
    ssize_t n = ::pread(fd.get(), hdr + got, sizeof hdr - got, static_cast<off_t>(got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  fd.reset();
  if (got < EI_NIDENT || std::memcmp(hdr, ELFMAG, SELFMAG) != 0) return std::nullopt;
  Identity id;
  id.elf_class = hdr[EI_CLASS];
  if (id.elf_class == ELFCLASS32 && got >= sizeof(Elf32_Ehdr)) {
    Elf32_Ehdr e;
    std::memcpy(&e, hdr, sizeof e);
    id.machine = e.e_machine;
    id.type = e.e_type;
  } else if (id.elf_class == ELFCLASS64 && got >= sizeof(Elf64_Ehdr)) {
    Elf64_Ehdr e;
    std::memcpy(&e, hdr, sizeof e);
    id.machine = e.e_machine;
    id.type = e.e_type;
  } else {
    return std::nullopt;
  }
  if (hdr[EI_DATA] != ELFDATA2LSB) return std::nullopt;  // only little-endian hosts are supported
  return id;
}

Identity host_identity() {
  Identity id;
  id.elf_class = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if defined(__x86_64__)
  id.machine = EM_X86_64;
#elif defined(__aarch64__)
  id.machine = EM_AARCH64;
#elif defined(__i386__)
  id.machine = EM_386;
#endif
  id.type = ET_DYN;
  return id;
}

std::string describe(const Identity& id) {
  std::string cls = id.elf_class == ELFCLASS64 ? "ELF64" : id.elf_class == ELFCLASS32 ? "ELF32" : "ELF?";
  std::string machine;
  switch (id.machine) {
    case EM_X86_64: machine = "x86-64"; break;
    case EM_386: machine = "i386"; break;
    case EM_AARCH64: machine = "aarch64"; break;
    case EM_ARM: machine = "arm"; break;
    default: machine = "machine " + std::to_string(id.machine);
  }
  return cls + " " + machine;
}

std::vector<CacheEntry> read_ld_so_cache(const fs::path& cache) {
  std::vector<CacheEntry> out;
  std::string data;
  try {
    data = util::read_file(cache);
  } catch (...) {
    return out;
  }
  // New format: magic "glibc-ld.so.cache" "1.1", nlibs, len_strings, flags,
  // padding, then nlibs entries of {int32 flags, uint32 key, uint32 value,
  // uint32 osversion, uint64 hwcap}; string offsets are from the file start.
  static const char magic[] = "glibc-ld.so.cache1.1";
  std::size_t start = 0;
  if (data.compare(0, 11, "ld.so-1.7.0") == 0) {
    // Old format header followed by the new one, 8-byte aligned.
    if (data.size() < 16) return out;
    std::uint32_t nold;
    std::memcpy(&nold, data.data() + 12, 4);
    start = (16 + static_cast<std::size_t>(nold) * 12 + 7) & ~std::size_t(7);
  }
  if (data.size() < start + 48 || data.compare(start, sizeof magic - 1, magic) != 0) return out;
  std::uint32_t nlibs;
  std::memcpy(&nlibs, data.data() + start + 20, 4);
  const std::size_t header = 48, entry = 24;
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    std::size_t at = start + header + static_cast<std::size_t>(i) * entry;
    if (at + entry > data.size()) break;
    std::uint32_t key, value;
    std::memcpy(&key, data.data() + at + 4, 4);
    std::memcpy(&value, data.data() + at + 8, 4);
    auto str = [&](std::uint32_t off) -> std::string {
      if (off >= data.size()) return {};
      auto end = data.find('\0', off);
      if (end == std::string::npos) return {};
      return data.substr(off, end - off);
    };
    auto name = str(key), path = str(value);
    if (!name.empty() && !path.empty()) out.push_back({name, path});
  }
  return out;
}

std::vector<fs::path> default_library_dirs() {
#if defined(__x86_64__)
  return {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
#elif defined(__aarch64__)
  return {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
#else
  return {"/lib", "/usr/lib"};
#endif
}

// ---- Dynamic section -------------------------------------------------------

namespace {

template <class T>
T load(const std::string& buf, std::size_t at) {
  T v;
  std::memcpy(&v, buf.data() + at, sizeof v);
  return v;
}

using util::split_path_list;

template <class Ehdr, class Phdr, class Dyn>
DynamicInfo read_dynamic_as(const ObjectFile& f, const std::string& head, Identity id) {
  DynamicInfo info;
  info.identity = id;
  if (head.size() < sizeof(Ehdr)) f.fail("truncated ELF: the file is shorter than its ELF header");
  auto eh = load<Ehdr>(head, 0);
  if (eh.e_phnum == 0) return info;
  if (eh.e_phentsize != sizeof(Phdr))
    f.fail("malformed ELF: unexpected program header size " + std::to_string(eh.e_phentsize));
  auto phdrs = f.read(eh.e_phoff, std::uint64_t(eh.e_phnum) * sizeof(Phdr), "the program headers");

  struct Load {
    std::uint64_t vaddr, offset, filesz;
  };
  std::vector<Load> loads;
  std::optional<Phdr> dynamic;
  for (std::size_t i = 0; i < eh.e_phnum; ++i) {
    auto ph = load<Phdr>(phdrs, i * sizeof(Phdr));
    if (ph.p_type == PT_LOAD) loads.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
    if (ph.p_type == PT_DYNAMIC) dynamic = ph;
  }
  if (!dynamic) return info;
  info.has_dynamic = true;
  auto dyn = f.read(dynamic->p_offset, dynamic->p_filesz, "the dynamic section");

  std::vector<std::uint64_t> needed;
  std::optional<std::uint64_t> soname, rpath, runpath, strtab_addr, strsz, verdef_addr, verdefnum;
  for (std::size_t at = 0; at + sizeof(Dyn) <= dyn.size(); at += sizeof(Dyn)) {
    auto d = load<Dyn>(dyn, at);
    if (d.d_tag == DT_NULL) break;
    std::uint64_t val = d.d_un.d_val;
    switch (d.d_tag) {
      case DT_NEEDED: needed.push_back(val); break;
      case DT_SONAME: soname = val; break;
      case DT_RPATH: rpath = val; break;
      case DT_RUNPATH: runpath = val; break;
      case DT_STRTAB: strtab_addr = val; break;
      case DT_STRSZ: strsz = val; break;
      case DT_VERDEF: verdef_addr = val; break;
      case DT_VERDEFNUM: verdefnum = val; break;
      default: break;
    }
  }
  if (needed.empty() && !soname && !rpath && !runpath && !verdef_addr) return info;
  if (!strtab_addr || !strsz) f.fail("malformed ELF: the dynamic section has no string table");
  // DT_STRTAB is an address: map it to a file offset through the PT_LOAD segments.
  auto file_offset = [&](std::uint64_t addr) -> std::optional<std::uint64_t> {
    for (const auto& l : loads)
      if (addr >= l.vaddr && addr - l.vaddr < l.filesz) return addr - l.vaddr + l.offset;
    return std::nullopt;
  };
  auto strtab_off = file_offset(*strtab_addr);
  if (!strtab_off) f.fail("malformed ELF: the string table lies outside every loadable segment");
  auto strtab = f.read(*strtab_off, *strsz, "the dynamic string table");
  auto str = [&](std::uint64_t off) {
    if (off >= strtab.size()) f.fail("malformed ELF: a dynamic entry points outside the string table");
    auto end = strtab.find('\0', off);
    if (end == std::string::npos) f.fail("malformed ELF: an unterminated string in the string table");
    return strtab.substr(off, end - off);
  };
  for (auto n : needed) info.needed.push_back(str(n));
  if (soname) info.soname = str(*soname);
  if (rpath) info.rpath = split_path_list(str(*rpath));
  if (runpath) info.runpath = split_path_list(str(*runpath));
  if (verdef_addr && verdefnum) {
    // Elf32_Verdef/Verdaux and their 64-bit twins have the same layout.
    constexpr std::uint64_t max_definitions = 4096;  // glibc's libc.so.6 has about 50
    if (*verdefnum > max_definitions) f.fail("malformed ELF: " + std::to_string(*verdefnum) + " version definitions");
    auto at = file_offset(*verdef_addr);
    if (!at) f.fail("malformed ELF: the version definitions lie outside every loadable segment");
    for (std::uint64_t i = 0; i < *verdefnum; ++i) {
      auto def = load<Elf64_Verdef>(f.read(*at, sizeof(Elf64_Verdef), "a version definition"), 0);
      if (def.vd_cnt > 0) {
        auto aux = load<Elf64_Verdaux>(f.read(*at + def.vd_aux, sizeof(Elf64_Verdaux), "a version name"), 0);
        info.version_definitions.push_back(str(aux.vda_name));
      }
      if (def.vd_next == 0) break;
      *at += def.vd_next;
    }
  }
  return info;
}

bool same_target(const Identity& a, const Identity& b) { return a.elf_class == b.elf_class && a.machine == b.machine; }

}  // namespace

DynamicInfo read_dynamic(const fs::path& path) {
  ObjectFile f(path);
  auto head = f.read(0, std::min<std::uint64_t>(f.size(), sizeof(Elf64_Ehdr)), "the ELF header");
  if (head.size() < SELFMAG || std::memcmp(head.data(), ELFMAG, SELFMAG) != 0) f.fail("not an ELF file");
  if (head.size() < EI_NIDENT) f.fail("truncated ELF: the file is shorter than its ELF header");
  if (head[EI_DATA] != ELFDATA2LSB) f.fail("big-endian ELF objects are not supported");
  auto id = read_identity(path);
  if (!id) f.fail("truncated ELF: the file is shorter than its ELF header");
  if (id->elf_class == ELFCLASS32) return read_dynamic_as<Elf32_Ehdr, Elf32_Phdr, Elf32_Dyn>(f, head, *id);
  if (id->elf_class == ELFCLASS64) return read_dynamic_as<Elf64_Ehdr, Elf64_Phdr, Elf64_Dyn>(f, head, *id);
  f.fail("unknown ELF class " + std::to_string(id->elf_class));
}

std::optional<std::string> glibc_version(const fs::path& libc) {
  DynamicInfo info;
  try {
    info = read_dynamic(libc);
  } catch (const Error&) {
    return std::nullopt;
  }
  int best_minor = -1;
  for (const auto& v : info.version_definitions) {
    int major = 0, minor = 0;
    char tail = 0;
    if (std::sscanf(v.c_str(), "GLIBC_%d.%d%c", &major, &minor, &tail) == 2 && major == 2 && minor > best_minor)
      best_minor = minor;
  }
  if (best_minor < 0) return std::nullopt;
  return "2." + std::to_string(best_minor);
}

std::string expand_dst(const std::string& entry, const fs::path& origin) {
#if defined(__x86_64__)
  const std::string lib = "lib/x86_64-linux-gnu", platform = "x86_64";
#elif defined(__aarch64__)
  const std::string lib = "lib/aarch64-linux-gnu", platform = "aarch64";
#else
  const std::string lib = "lib", platform = "";
#endif
  std::string out;
  for (std::size_t i = 0; i < entry.size();) {
    if (entry[i] != '$') {
      out += entry[i++];
      continue;
    }
    auto take = [&](const std::string& name, const std::string& value) {
      for (const std::string& form : {"$" + name, "${" + name + "}"}) {
        if (entry.compare(i, form.size(), form) != 0) continue;
        // "$ORIGINX" is not $ORIGIN: the name must end there.
        char next = i + form.size() < entry.size() ? entry[i + form.size()] : '/';
        if (form[1] != '{' && (std::isalnum(static_cast<unsigned char>(next)) || next == '_')) continue;
        out += value;
        i += form.size();
        return true;
      }
      return false;
    };
    if (take("ORIGIN", origin.string()) || take("LIB", lib) || take("PLATFORM", platform)) continue;
    out += entry[i++];
  }
  return out;
}

SearchContext loader_context_from_environment() {
  SearchContext ctx;
  for (const auto& dir : split_path_list(util::getenv_str("LD_LIBRARY_PATH"))) ctx.ld_library_path.emplace_back(dir);
  ctx.cache = read_ld_so_cache();
  ctx.default_dirs = default_library_dirs();
  ctx.want = host_identity();
  return ctx;
}

namespace {

// One object's RPATH in front of the RPATHs of the objects that loaded it
// (glibc walks l_loader the same way). Shared, never copied: a child whose
// own RPATH adds nothing new shares its loader's node, so a chain of N
// objects costs N nodes at most, not N*N directory entries.
struct RpathNode {
  std::vector<fs::path> dirs;
  std::shared_ptr<const RpathNode> loader;
};
using RpathChain = std::shared_ptr<const RpathNode>;

// The loader's search with memory: whether a directory exists is asked of
// the file system once per resolution, and every stat is counted.
class LibrarySearch {
 public:
  explicit LibrarySearch(const SearchContext& ctx) : ctx_(ctx) {}

  std::size_t probes() const { return probes_; }

  // The chain an object's dependencies are searched with: its own RPATH
  // (existing directories only, as a missing one can never hold a library)
  // in front of its loaders'.
  RpathChain extend(const RpathChain& loaders, const std::vector<fs::path>& own) {
    std::vector<fs::path> dirs;
    for (const auto& dir : own)
      if (dir_exists(dir) && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
    if (dirs.empty() || (loaders && loaders->dirs == dirs)) return loaders;
    return std::make_shared<const RpathNode>(RpathNode{std::move(dirs), loaders});
  }

  Lookup find(const std::string& name, const RpathChain& rpath, const std::vector<fs::path>& runpath) {
    Lookup result;
    if (name.find('/') != std::string::npos) {
      accept(name, "path", result);
      return result;
    }
    auto search = [&](const std::vector<fs::path>& dirs, const char* via) {
      for (const auto& dir : dirs)
        if (dir_exists(dir) && accept(dir / name, via, result)) return true;
      return false;
    };
    if (runpath.empty()) {
      std::unordered_set<std::string> seen;  // a directory twice in the chain answers the same
      for (const RpathNode* node = rpath.get(); node; node = node->loader.get())
        for (const auto& dir : node->dirs)
          if (seen.insert(dir.string()).second && accept(dir / name, "RPATH", result)) return result;
    }
    if (search(ctx_.ld_library_path, "LD_LIBRARY_PATH")) return result;
    if (search(runpath, "RUNPATH")) return result;
    for (const auto& e : ctx_.cache)
      if (e.name == name && accept(e.path, "ld.so.cache", result)) return result;
    search(ctx_.default_dirs, "default directories");
    return result;
  }

 private:
  bool dir_exists(const fs::path& dir) {
    auto [it, inserted] = dirs_.try_emplace(dir.string(), false);
    if (inserted) {
      ++probes_;
      std::error_code ec;
      it->second = fs::is_directory(dir, ec);
    }
    return it->second;
  }

  // True (and result filled) when `candidate` exists and has the wanted class and machine.
  bool accept(const fs::path& candidate, const char* via, Lookup& result) {
    ++probes_;
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) return false;
    auto id = read_identity(candidate);
    if (!id) {
      result.skipped.push_back({candidate, "not an ELF object, or truncated"});
      return false;
    }
    if (!same_target(*id, ctx_.want)) {
      result.skipped.push_back({candidate, describe(*id) + ", not " + describe(ctx_.want)});
      return false;
    }
    result.path = candidate.lexically_normal();  // "$ORIGIN/../lib" reads better resolved
    result.via = via;
    return true;
  }

  const SearchContext& ctx_;
  std::unordered_map<std::string, bool> dirs_;
  std::size_t probes_ = 0;
};

}  // namespace

Lookup find_library(const std::string& name, const SearchContext& ctx, const std::vector<fs::path>& rpath,
                    const std::vector<fs::path>& runpath) {
  LibrarySearch search(ctx);
  return search.find(name, search.extend(nullptr, rpath), runpath);
}

Resolution resolve_needed(const fs::path& object, SearchContext ctx) {
  Resolution res;
  struct Pending {
    fs::path path;
    DynamicInfo info;
    RpathChain loaders;  // the RPATHs of the objects that loaded it, nearest first
  };
  auto root = read_dynamic(object);  // throws for a malformed root: the caller reports it
  ctx.want = root.identity;
  LibrarySearch search(ctx);
  std::set<std::string> loaded_names;
  std::set<fs::path> loaded_files;
  auto expand_all = [](const std::vector<std::string>& entries, const fs::path& obj) {
    const auto origin = fs::absolute(obj).parent_path();
    std::vector<fs::path> out;
    out.reserve(entries.size());
    for (const auto& e : entries) out.emplace_back(expand_dst(e, origin));
    return out;
  };
  std::deque<Pending> queue;
  loaded_files.insert(fs::weakly_canonical(object));
  if (!root.soname.empty()) loaded_names.insert(root.soname);
  queue.push_back({object, root, nullptr});
  while (!queue.empty()) {
    auto current = std::move(queue.front());
    queue.pop_front();
    // The loader ignores an object's RPATH when it has a RUNPATH; its
    // dependencies still inherit the RPATHs of its loaders.
    auto rpath = current.info.runpath.empty()
                     ? search.extend(current.loaders, expand_all(current.info.rpath, current.path))
                     : current.loaders;
    auto runpath = expand_all(current.info.runpath, current.path);
    for (const auto& name : current.info.needed) {
      if (loaded_names.count(name)) continue;
      NeededEdge edge{name, current.path, search.find(name, rpath, runpath)};
      loaded_names.insert(name);  // a missing name is listed once: the loader would stop there
      if (!edge.lookup.path) {
        res.missing.push_back(std::move(edge));
        continue;
      }
      res.resolved.push_back(edge);
      auto canonical = fs::weakly_canonical(*edge.lookup.path);
      if (!loaded_files.insert(canonical).second) continue;
      try {
        auto info = read_dynamic(*edge.lookup.path);
        if (!info.soname.empty()) loaded_names.insert(info.soname);
        queue.push_back({*edge.lookup.path, std::move(info), rpath});
      } catch (const Error& e) {
        res.unreadable.emplace_back(e.what());
      }
    }
  }
  res.probes = search.probes();
  return res;
}

}  // namespace provkit::elf
