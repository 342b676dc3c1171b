#pragma once
// A minimal little-endian ELF64 object holding one section of the given bytes (and the section-name table):
// what elf::read_sections and the kernel readers need, for tests and fuzz targets that make the section's
// contents themselves (hostile offload bundles, fatbins of many cubins).
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace provkit::test {

// A little-endian ELF64 shared object's header for `machine`, with no program or section headers yet.
inline Elf64_Ehdr elf64_header(std::uint16_t machine) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  return eh;
}

inline std::string elf_with_section(const std::string& name, const std::string& bytes) {
  const std::string names = std::string(1, '\0') + name + '\0' + ".shstrtab" + '\0';
  Elf64_Ehdr eh = elf64_header(EM_X86_64);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  eh.e_shstrndx = 2;
  // The section at 64 (8-aligned, as containers are), the names after it, the headers last.
  const std::uint64_t data_at = sizeof(Elf64_Ehdr), names_at = data_at + bytes.size();
  eh.e_shoff = (names_at + names.size() + 7) & ~std::uint64_t(7);
  Elf64_Shdr sh[3]{};
  sh[1].sh_name = 1;
  sh[1].sh_type = SHT_PROGBITS;
  sh[1].sh_offset = data_at;
  sh[1].sh_size = bytes.size();
  sh[1].sh_addralign = 8;
  sh[2].sh_name = static_cast<Elf64_Word>(name.size() + 2);
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = names_at;
  sh[2].sh_size = names.size();
  std::string out(reinterpret_cast<const char*>(&eh), sizeof eh);
  out += bytes;
  out += names;
  out.resize(eh.e_shoff, '\0');
  out.append(reinterpret_cast<const char*>(sh), sizeof sh);
  return out;
}

}  // namespace provkit::test
