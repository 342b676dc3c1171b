#include "provkit/elf/elf.hpp"

#include <elf.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
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
#include "provkit/util/environment.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/paths.hpp"
#include "provkit/util/process.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::elf {

namespace {

// The first sizeof(Elf64_Ehdr) bytes of the file, or as many as it has: how many were read.
std::size_t read_elf_header(int fd, unsigned char (&hdr)[sizeof(Elf64_Ehdr)]) {
  std::size_t got = 0;
  while (got < sizeof hdr) {
    ssize_t n = ::pread(fd, hdr + got, sizeof hdr - got, static_cast<off_t>(got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

}  // namespace

std::optional<Identity> read_identity(const fs::path& path) {
  std::string why;
  util::Fd fd = detail::open_regular_file(path, why);
  if (!fd) return std::nullopt;
  unsigned char hdr[sizeof(Elf64_Ehdr)] = {};
  const std::size_t got = read_elf_header(fd.get(), hdr);
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
    if (ph.p_type == PT_INTERP) info.has_interp = true;
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
  // An empty element is the current directory to ld.so (glibc's fillin_rpath), as in LD_LIBRARY_PATH.
  auto search_list = [](const std::string& value) {
    return value.empty() ? std::vector<std::string>{} : split_path_list(value, util::EmptyEntry::current_dir);
  };
  if (rpath) info.rpath = search_list(str(*rpath));
  if (runpath) info.runpath = search_list(str(*runpath));
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

std::string expand_dst(const std::string& entry, const fs::path& origin, std::string_view platform_name) {
#if defined(__x86_64__)
  const std::string lib = "lib/x86_64-linux-gnu", machine = "x86_64";
#elif defined(__aarch64__)
  const std::string lib = "lib/aarch64-linux-gnu", machine = "aarch64";
#else
  const std::string lib = "lib", machine = "";
#endif
  const std::string platform = platform_name.empty() ? machine : std::string(platform_name);
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

std::vector<fs::path> split_ld_library_path(std::string_view value) {
  std::vector<fs::path> out;
  if (value.empty()) return out;  // glibc: an empty LD_LIBRARY_PATH is no path at all
  for (const auto& dir : split_path_list(value, util::EmptyEntry::current_dir)) out.emplace_back(dir);
  return out;
}

LoaderFacts parse_loader_help(std::string_view help) {
  LoaderFacts facts;
  std::vector<std::string>& out = facts.subdirs;
  std::vector<std::string> legacy_hwcaps;
  std::string platform;
  bool tls = false;
  enum { other, hwcaps, legacy } section = other;
  for (const auto& line : util::split(help, '\n')) {
    if (line.rfind("Subdirectories of glibc-hwcaps directories", 0) == 0) {
      section = hwcaps;
      continue;
    }
    if (line.rfind("Legacy HWCAP subdirectories", 0) == 0) {
      section = legacy;
      continue;
    }
    if (line.rfind("  ", 0) != 0) {
      section = other;
      continue;
    }
    if (section == other) continue;
    auto name = line.substr(2, line.find(' ', 2) - 2);
    if (section == legacy && line.find("(AT_PLATFORM") != std::string::npos) facts.platform = name;
    if (line.find("searched)") == std::string::npos) continue;
    if (section == hwcaps) out.push_back("glibc-hwcaps/" + name);
    else if (line.find("AT_PLATFORM") != std::string::npos) platform = name;
    else if (name == "tls") tls = true;
    else legacy_hwcaps.push_back(name);
  }
  // _dl_important_hwcaps (glibc 2.36 elf/dl-hwcaps.c): components hwcaps (lowest bit first; --help prints
  // them highest first), platform, tls; every subset, largest mask first, each written from the last
  // component to the first ("tls/x86_64/x86_64").
  std::vector<std::string> parts(legacy_hwcaps.rbegin(), legacy_hwcaps.rend());
  if (!platform.empty()) parts.push_back(platform);
  if (tls) parts.emplace_back("tls");
  if (parts.size() < 16) {
    for (std::size_t mask = (std::size_t(1) << parts.size()) - 1; mask > 0; --mask) {
      std::string sub;
      for (std::size_t j = parts.size(); j-- > 0;)
        if (mask & (std::size_t(1) << j)) sub += (sub.empty() ? "" : "/") + parts[j];
      if (std::find(out.begin(), out.end(), sub) == out.end()) out.push_back(sub);
    }
  }
  return facts;
}

LoaderFacts host_loader_facts() {
#if defined(__x86_64__)
  const char* ldso = "/lib64/ld-linux-x86-64.so.2";
#elif defined(__aarch64__)
  const char* ldso = "/lib/ld-linux-aarch64.so.1";
#else
  const char* ldso = nullptr;
#endif
  if (!ldso || ::access(ldso, X_OK) != 0) return {};
  util::RunOptions options;
  options.stderr_to = util::StderrTo::discard;
  options.timeout = std::chrono::seconds(10);
  auto r = util::run({ldso, "--help"}, options);
  if (r.exit_status != 0) return {};
  return parse_loader_help(r.output);
}

SearchContext loader_context_from_environment() {
  SearchContext ctx;
  auto facts = host_loader_facts();
  ctx.subdirs = std::move(facts.subdirs);
  ctx.platform = std::move(facts.platform);
  ctx.ld_library_path = split_ld_library_path(util::env_value(util::EnvVar::ld_library_path));
  ctx.cache = read_ld_so_cache();
  ctx.default_dirs = default_library_dirs();
  ctx.want = host_identity();
  return ctx;
}

namespace {

enum class Candidate { absent, passed_over, stops, loads };
struct CandidateVerdict {
  Candidate kind;
  std::string why;  // ld.so's own words where it has them
};

// What glibc's open_verify (elf/dl-load.c, 2.36) makes of a file it tries:
// one it cannot open is passed over (ENOENT, EACCES...), as is an ELF of
// another class or machine; anything else that is not a loadable ELF of the
// wanted kind ends the whole load with the message ld.so prints. A FIFO or
// device is passed over unread (ld.so would block on it).
CandidateVerdict verify_candidate(const fs::path& candidate, const Identity& want) {
  util::Fd fd(::open(candidate.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) return {Candidate::absent, {}};
    return {Candidate::passed_over, std::string("cannot be opened: ") + std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return {Candidate::passed_over, "cannot be read"};
  if (S_ISDIR(st.st_mode)) return {Candidate::stops, "cannot read file data: Error 21"};  // EISDIR, as ld.so words it
  if (!S_ISREG(st.st_mode)) return {Candidate::passed_over, "not a regular file"};
  unsigned char hdr[sizeof(Elf64_Ehdr)] = {};
  const std::size_t got = read_elf_header(fd.get(), hdr);
  const bool is64 = want.elf_class == ELFCLASS64;
  const std::size_t ehdr_size = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (got < ehdr_size) return {Candidate::stops, "file too short"};
  if (std::memcmp(hdr, ELFMAG, SELFMAG) != 0) return {Candidate::stops, "invalid ELF header"};
  if (hdr[EI_CLASS] != want.elf_class) {
    // e_type and e_machine sit at the same offsets (16, 18) in both classes.
    Identity other{hdr[EI_CLASS], static_cast<std::uint16_t>(hdr[18] | (hdr[19] << 8)),
                   static_cast<std::uint16_t>(hdr[16] | (hdr[17] << 8))};
    return {Candidate::passed_over, describe(other) + ", not " + describe(want)};
  }
  if (hdr[EI_DATA] != ELFDATA2LSB) return {Candidate::stops, "ELF file data encoding not little-endian"};
  if (hdr[EI_VERSION] != EV_CURRENT) return {Candidate::stops, "ELF file version ident does not match current one"};
  if (hdr[EI_OSABI] != ELFOSABI_SYSV && hdr[EI_OSABI] != ELFOSABI_GNU)
    return {Candidate::stops, "ELF file OS ABI invalid"};
  std::uint16_t type = 0, machine = 0, phentsize = 0, phnum = 0;
  std::uint64_t phoff = 0;
  if (is64) {
    Elf64_Ehdr e;
    std::memcpy(&e, hdr, sizeof e);
    type = e.e_type, machine = e.e_machine, phentsize = e.e_phentsize, phnum = e.e_phnum, phoff = e.e_phoff;
  } else {
    Elf32_Ehdr e;
    std::memcpy(&e, hdr, sizeof e);
    type = e.e_type, machine = e.e_machine, phentsize = e.e_phentsize, phnum = e.e_phnum, phoff = e.e_phoff;
  }
  if (machine != want.machine) {
    Identity other{hdr[EI_CLASS], machine, type};
    return {Candidate::passed_over, describe(other) + ", not " + describe(want)};
  }
  if (type != ET_DYN && type != ET_EXEC) return {Candidate::stops, "only ET_DYN and ET_EXEC can be loaded"};
  if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
    return {Candidate::stops, "ELF file's phentsize not the expected size"};
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (phoff > size || std::uint64_t(phnum) * phentsize > size - phoff)
    return {Candidate::stops, "cannot read file data"};
  return {Candidate::loads, {}};
}

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
    // Done when found, or when ld.so would give up at a candidate.
    auto take = [&](const fs::path& candidate, const char* via) {
      return accept(candidate, via, result) || result.stopped_at.has_value();
    };
    // One search directory as ld.so walks it: its hwcaps subdirectories first, then itself.
    auto in_dir = [&](const fs::path& dir, const char* via) {
      for (const auto& sub : ctx_.subdirs)
        if (dir_exists(dir / sub) && take(dir / sub / name, via)) return true;
      return take(dir / name, via);
    };
    auto search = [&](const std::vector<fs::path>& dirs, const char* via) {
      for (const auto& dir : dirs)
        if (dir_exists(dir) && in_dir(dir, via)) return true;
      return false;
    };
    if (runpath.empty()) {
      std::unordered_set<std::string> seen;  // a directory twice in the chain answers the same
      for (const RpathNode* node = rpath.get(); node; node = node->loader.get())
        for (const auto& dir : node->dirs)
          if (seen.insert(dir.string()).second && in_dir(dir, "RPATH")) return result;
    }
    if (search(ctx_.ld_library_path, "LD_LIBRARY_PATH")) return result;
    if (search(runpath, "RUNPATH")) return result;
    for (const auto& e : ctx_.cache)
      if (e.name == name && take(e.path, "ld.so.cache")) return result;
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

  // True (and result filled) when the loader takes `candidate`; false when it
  // passes over it (absent, unreadable, another class or machine) or stops
  // there (result.stopped_at filled: the caller ends the search).
  bool accept(const fs::path& candidate, const char* via, Lookup& result) {
    ++probes_;
    auto verdict = verify_candidate(candidate, ctx_.want);
    switch (verdict.kind) {
      case Candidate::absent: return false;
      case Candidate::passed_over: result.skipped.push_back({candidate, verdict.why}); return false;
      case Candidate::stops: result.stopped_at = Skipped{candidate, verdict.why}; return false;
      case Candidate::loads: break;
    }
    result.path = candidate.lexically_normal();  // "$ORIGIN/../lib" reads better resolved
    result.opened = candidate;
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
    fs::path opened;  // the path as ld.so opened it: the origin of its $ORIGIN
    DynamicInfo info;
    RpathChain loaders;  // the RPATHs of the objects that loaded it, nearest first
  };
  auto root = read_dynamic(object);  // throws for a malformed root: the caller reports it
  ctx.want = root.identity;
  LibrarySearch search(ctx);
  std::set<std::string> loaded_names;
  std::set<fs::path> loaded_files;
  // $ORIGIN: a program's real folder (the kernel runs the link's target); a
  // library's folder as found, links not followed, ".." kept as glibc keeps it.
  auto origin_of = [&](const fs::path& obj, bool is_root) {
    std::error_code ec;
    if (is_root && root.has_interp) {
      auto real = fs::canonical(obj, ec);
      if (!ec) return real.parent_path();
    }
    return fs::absolute(obj).parent_path();
  };
  auto expand_all = [&](const std::vector<std::string>& entries, const fs::path& origin) {
    std::vector<fs::path> out;
    out.reserve(entries.size());
    for (const auto& e : entries) out.emplace_back(expand_dst(e, origin, ctx.platform));
    return out;
  };
  std::deque<Pending> queue;
  loaded_files.insert(fs::weakly_canonical(object));
  if (!root.soname.empty()) loaded_names.insert(root.soname);
  queue.push_back({object, object, root, nullptr});
  bool is_root = true;
  while (!queue.empty()) {
    auto current = std::move(queue.front());
    queue.pop_front();
    const auto origin = origin_of(current.opened, is_root);
    is_root = false;
    // The loader ignores an object's RPATH when it has a RUNPATH; its
    // dependencies still inherit the RPATHs of its loaders.
    auto rpath = current.info.runpath.empty() ? search.extend(current.loaders, expand_all(current.info.rpath, origin))
                                              : current.loaders;
    auto runpath = expand_all(current.info.runpath, origin);
    for (const auto& name : current.info.needed) {
      if (loaded_names.count(name)) continue;
      // ld.so expands $ORIGIN, $LIB and $PLATFORM in a needed name that holds a '/'
      // (python-build-standalone's "$ORIGIN/../lib/libpython3.X.so.1.0").
      const std::string wanted = name.find('/') != std::string::npos ? expand_dst(name, origin, ctx.platform) : name;
      NeededEdge edge{name, current.path, search.find(wanted, rpath, runpath)};
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
        queue.push_back({*edge.lookup.path, *edge.lookup.opened, std::move(info), rpath});
      } catch (const Error& e) {
        res.unreadable.emplace_back(e.what());
      }
    }
  }
  res.probes = search.probes();
  return res;
}

}  // namespace provkit::elf
