#pragma once
// A small ELF reader of our own: enough to tell a library's class and machine
// and to walk DT_NEEDED through RPATH/RUNPATH. Malformed files are refused
// with provkit::Error (check_failed) naming the file, never read past.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace provkit::elf {

namespace fs = std::filesystem;

struct Identity {
  int elf_class = 0;        // 1 = ELFCLASS32, 2 = ELFCLASS64
  std::uint16_t machine = 0;  // e_machine (EM_X86_64 = 62, EM_386 = 3, EM_AARCH64 = 183)
  std::uint16_t type = 0;     // e_type (ET_EXEC = 2, ET_DYN = 3)
  bool operator==(const Identity&) const = default;
};

// Reads the ELF header only. nullopt when the file is not an ELF at all
// (or unreadable, or too short to hold a header).
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

}  // namespace provkit::elf
