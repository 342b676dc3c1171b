#include "target.hpp"

#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>

namespace provkit::ccshim {

namespace {

std::optional<elf::Identity> identity_of_triple(std::string_view triple) {
  auto arch = triple.substr(0, triple.find('-'));
  elf::Identity id;
  id.type = ET_DYN;
  if (arch == "x86_64" || arch == "amd64") {
    id.elf_class = ELFCLASS64, id.machine = EM_X86_64;
  } else if (arch == "i386" || arch == "i486" || arch == "i586" || arch == "i686" || arch == "x86") {
    id.elf_class = ELFCLASS32, id.machine = EM_386;
  } else if (arch == "aarch64" || arch == "arm64") {
    id.elf_class = ELFCLASS64, id.machine = EM_AARCH64;
  } else if (arch.starts_with("arm") || arch.starts_with("thumb")) {
    id.elf_class = ELFCLASS32, id.machine = EM_ARM;
  } else if (arch == "riscv64") {
    id.elf_class = ELFCLASS64, id.machine = EM_RISCV;
  } else if (arch == "powerpc64le" || arch == "ppc64le") {
    id.elf_class = ELFCLASS64, id.machine = EM_PPC64;
  } else {
    return std::nullopt;
  }
  return id;
}

// One row per architecture the shim knows: how Debian's multiarch directories
// name it (gcc -dumpmachine) and how zig's target triples do.
struct ArchNames {
  std::uint16_t machine;
  unsigned char elf_class;
  const char* multiarch;          // "x86_64-linux-gnu"
  const char* zig;                // "x86_64"; empty: no zig glibc target is chosen for it
  bool baseline_is_gccs = false;  // zig_baseline_is_gccs
};
constexpr ArchNames kArchitectures[] = {
    {EM_X86_64, ELFCLASS64, "x86_64-linux-gnu", "x86_64", true},
    {EM_X86_64, 0, "x86_64-linux-gnux32", ""},
    {EM_386, 0, "i386-linux-gnu", "x86"},
    {EM_AARCH64, 0, "aarch64-linux-gnu", "aarch64", true},
    {EM_ARM, 0, "arm-linux-gnueabihf", "arm"},
    {EM_RISCV, ELFCLASS64, "riscv64-linux-gnu", "riscv64"},
    {EM_RISCV, 0, "riscv64-linux-gnu", ""},
    {EM_PPC64, 0, "powerpc64le-linux-gnu", "powerpc64le"},
    {EM_S390, 0, "s390x-linux-gnu", "s390x"},
};

// The row for `id`: the first of its machine whose class is its own or 0 (any).
const ArchNames* arch_names(const elf::Identity& id) {
  for (const auto& a : kArchitectures)
    if (a.machine == id.machine && (a.elf_class == 0 || a.elf_class == id.elf_class)) return &a;
  return nullptr;
}

// "2.36" or "2.34.0" as (major, minor); nullopt when it is no release number.
std::optional<std::pair<int, int>> glibc_release(std::string_view v) {
  int major = 0, minor = 0;
  char tail = 0;
  std::string s(v);
  int n = std::sscanf(s.c_str(), "%d.%d%c", &major, &minor, &tail);
  if (n < 2 || (n == 3 && tail != '.')) return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace

elf::Identity target_identity(const Invocation& inv, const elf::Identity& host) {
  elf::Identity target = host;
  for (const auto& a : inv.arguments) {
    std::optional<elf::Identity> named;
    if (a.is("-m32") && host.machine == EM_X86_64) {
      named = elf::Identity{ELFCLASS32, EM_386, ET_DYN};
    } else if (a.is("-m64")) {
      named = host;
    } else if (a.option && a.option->rule == Rule::target && !a.value.empty()) {
      named = identity_of_triple(a.value);
    }
    if (named) target = *named;
  }
  return target;
}

std::string multiarch_triple(const elf::Identity& id) {
  const ArchNames* a = arch_names(id);
  return a ? a->multiarch : "";
}

std::string zig_arch(const elf::Identity& id) {
  const ArchNames* a = arch_names(id);
  return a ? a->zig : "";
}

bool zig_baseline_is_gccs(const elf::Identity& id) {
  const ArchNames* a = arch_names(id);
  return a && a->baseline_is_gccs;
}

std::string glibc_zig_can_build(const std::string& host, const std::optional<std::string>& zig_newest) {
  auto h = glibc_release(host);
  auto z = zig_newest ? glibc_release(*zig_newest) : std::nullopt;
  if (!h || !z || *h <= *z) return host;
  return std::to_string(z->first) + "." + std::to_string(z->second);
}

std::optional<std::string> shim_glibc(const Invocation& inv, const SearchContext& ctx) {
  if (inv.names_target || inv.m32 || !ctx.glibc_version) return std::nullopt;
  auto host = ctx.glibc_version();
  if (!host) return std::nullopt;
  return glibc_zig_can_build(*host, ctx.zig_newest_glibc ? ctx.zig_newest_glibc() : std::nullopt);
}

std::optional<std::string> zig_libc_file(const Invocation& inv, const SearchContext& ctx) {
  if (!ctx.host_libc || inv.no_std_includes || !shim_glibc(inv, ctx)) return std::nullopt;
  // zig's libc file (`zig libc` prints the format); the lines zig needs for Linux.
  return "include_dir=" + ctx.host_libc->include_dir.string() + "\n" +
         "sys_include_dir=" + ctx.host_libc->sys_include_dir.string() + "\n" +
         "crt_dir=" + ctx.host_libc->crt_dir.string() + "\n" + "msvc_lib_dir=\nkernel32_lib_dir=\ngcc_dir=\n";
}

}  // namespace provkit::ccshim
