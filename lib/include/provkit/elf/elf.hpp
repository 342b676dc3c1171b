#pragma once
// A small ELF reader of our own: enough to tell a library's class and machine
// and to walk DT_NEEDED through RPATH/RUNPATH. Malformed files are refused
// with provkit::Error (check_failed) naming the file, never read past.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::elf {

namespace fs = std::filesystem;

struct Identity {
  int elf_class = 0;          // 1 = ELFCLASS32, 2 = ELFCLASS64
  std::uint16_t machine = 0;  // e_machine (EM_X86_64 = 62, EM_386 = 3, EM_AARCH64 = 183)
  std::uint16_t type = 0;     // e_type (ET_EXEC = 2, ET_DYN = 3)
  bool operator==(const Identity&) const = default;
};

// Reads the ELF header only. nullopt when the file is not an ELF at all
// (or unreadable, or too short to hold a header, or not a regular file:
// a FIFO or a device is never read, so nothing here can block on one).
std::optional<Identity> read_identity(const fs::path& path);

// The identity of the running program (what a library must match to load).
Identity host_identity();

// "ELF64 x86-64" style text for messages.
std::string describe(const Identity& id);

// Entries of /etc/ld.so.cache (the new "glibc-ld.so.cache1.1" format):
// library name (soname as the cache keys it) and full path.
struct CacheEntry {
  std::string name;
  fs::path path;
};
std::vector<CacheEntry> read_ld_so_cache(const fs::path& cache = "/etc/ld.so.cache");

// The loader's default directories for the host, multiarch ones included.
std::vector<fs::path> default_library_dirs();

// ---- Dynamic section and loader-like resolution (used by envcheck --elf/--lib).

// What the loader reads from an object's PT_DYNAMIC: its needed libraries and
// search paths (unexpanded, in file order). Throws provkit::Error
// (check_failed) naming the file when it is not an ELF object, is truncated,
// or its headers point outside the file.
struct DynamicInfo {
  Identity identity;
  std::string soname;
  std::vector<std::string> needed;
  std::vector<std::string> rpath;                // DT_RPATH, split on ':'
  std::vector<std::string> runpath;              // DT_RUNPATH, split on ':'
  std::vector<std::string> version_definitions;  // DT_VERDEF names ("GLIBC_2.36", ...), in file order
  bool has_dynamic = false;                      // false for static executables
  bool has_interp = false;                       // a PT_INTERP: a program the kernel starts, not a library
};
DynamicInfo read_dynamic(const fs::path& path);

// The glibc release a libc.so.6 is: the highest GLIBC_2.N among its version
// definitions ("2.36"), as the symbol versions are what programs link
// against. nullopt when it is not a readable glibc (musl, not an ELF, absent).
std::optional<std::string> glibc_version(const fs::path& libc);

// Expands $ORIGIN / ${ORIGIN} (the directory of the object that carries the
// path), $LIB and $PLATFORM as the host loader does. ld.so applies it to
// RPATH, RUNPATH and to DT_NEEDED entries that hold a '/'. `platform`: what
// the host's ld.so calls its platform (LoaderFacts); empty: the machine's name.
std::string expand_dst(const std::string& entry, const fs::path& origin, std::string_view platform = {});

// Where the loader looks, besides an object's own RPATH/RUNPATH.
struct SearchContext {
  std::vector<fs::path> ld_library_path;
  std::vector<CacheEntry> cache;
  std::vector<fs::path> default_dirs;
  Identity want;  // class and machine a candidate must have (the host's, or the root object's)
  // The subdirectories ld.so tries in every search directory before the
  // directory itself, in its order ("glibc-hwcaps/x86-64-v3", ...,
  // "tls/x86_64", "x86_64"), and its $PLATFORM: LoaderFacts.
  std::vector<std::string> subdirs;
  std::string platform;
};

// What a glibc ld.so says of itself in its `--help` text (glibc 2.33+).
struct LoaderFacts {
  // The glibc-hwcaps subdirectories marked "searched", in priority order,
  // then (glibc before 2.37) every combination of the legacy hwcap names,
  // platform and "tls" marked "searched", most specific first, as
  // _dl_important_hwcaps builds them.
  std::vector<std::string> subdirs;
  std::string platform;  // the AT_PLATFORM line ("x86_64"; glibc says "haswell" on some Intel CPUs)
};
// Pure; empty for any other text (musl, no loader).
LoaderFacts parse_loader_help(std::string_view ldso_help);

// The host's ld.so asked (`ld.so --help`); empty when there is none.
LoaderFacts host_loader_facts();
// From $LD_LIBRARY_PATH, /etc/ld.so.cache and default_library_dirs().
SearchContext loader_context_from_environment();

// LD_LIBRARY_PATH as ld.so splits it: an empty element (`/x:`, `:/x`,
// `/x::/y`) is the current directory; an empty value is no directory at all.
std::vector<fs::path> split_ld_library_path(std::string_view value);

// A candidate the loader would pass over (wrong class or machine, not an ELF).
struct Skipped {
  fs::path path;
  std::string why;
};

struct Lookup {
  std::optional<fs::path> path;  // where the loader finds it; nullopt when it will not
  std::string via;               // "RPATH", "LD_LIBRARY_PATH", "RUNPATH", "ld.so.cache", "default directories", "path"
  std::vector<Skipped> skipped;
  // A candidate ld.so opens and gives up on, ending the whole load (glibc's
  // open_verify: not an ELF, too short, a directory, wrong byte order, not
  // ET_DYN/ET_EXEC...): `why` in ld.so's own words. path is then nullopt.
  std::optional<Skipped> stopped_at;
  std::optional<fs::path> opened;  // path as the loader opened it (unnormalised: "$ORIGIN/../lib" kept)
};

// Search for `name` as the loader would for an object whose (expanded)
// RPATH chain and RUNPATH are given: RPATH (only when there is no RUNPATH),
// LD_LIBRARY_PATH, RUNPATH, the cache, the default directories. A name with
// a '/' is used as it is.
Lookup find_library(const std::string& name, const SearchContext& ctx, const std::vector<fs::path>& rpath = {},
                    const std::vector<fs::path>& runpath = {});

struct NeededEdge {
  std::string name;    // the DT_NEEDED entry
  fs::path needed_by;  // the object that lists it
  Lookup lookup;
};
struct Resolution {
  std::vector<NeededEdge> resolved;
  std::vector<NeededEdge> missing;
  std::vector<std::string> unreadable;  // "path: why" for found objects that could not be parsed
  // File-system lookups made (a stat of a candidate file, or of a search
  // directory, asked once per resolution): linear in the number of objects
  // and distinct directories, however deep the chain of inherited RPATHs.
  std::size_t probes = 0;
};
// Walks DT_NEEDED breadth-first from `object` like the loader: each name is
// loaded once (a soname already loaded satisfies later requests), RPATHs are
// inherited down the chain of loaders unless the needing object has a
// RUNPATH. Candidates must match the root object's class and machine.
// $ORIGIN of a program (an object with PT_INTERP) is the folder of its real
// path, as the kernel hands ld.so /proc/self/exe; of a library, the folder
// of the path it was found at, links not followed (as glibc's l_origin).
Resolution resolve_needed(const fs::path& object, SearchContext ctx);

}  // namespace provkit::elf
