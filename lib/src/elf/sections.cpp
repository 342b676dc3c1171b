// An object's section table (sections.hpp).
#include "provkit/elf/sections.hpp"

#include <elf.h>

#include <cstring>

namespace provkit::elf {

namespace {

template <class Ehdr, class Shdr>
std::vector<Section> read_as(const ObjectFile& f, const unsigned char* head) {
  Ehdr eh;
  std::memcpy(&eh, head, sizeof eh);
  std::vector<Section> out;
  if (eh.e_shoff == 0) return out;
  if (eh.e_shentsize != sizeof(Shdr))
    f.fail("malformed ELF: unexpected section header size " + std::to_string(eh.e_shentsize));
  std::uint64_t count = eh.e_shnum;
  std::uint32_t names_index = eh.e_shstrndx;
  Shdr first;
  f.read_into(&first, eh.e_shoff, sizeof first, "the section headers");
  // More than 0xff00 sections: the counts live in section 0.
  if (count == 0) count = first.sh_size;
  if (names_index == SHN_XINDEX) names_index = first.sh_link;
  if (count == 0) return out;
  if (count > f.size() / sizeof(Shdr))
    f.fail("malformed ELF: " + std::to_string(count) + " section headers do not fit in the file");
  auto table = f.read(eh.e_shoff, count * sizeof(Shdr), "the section headers");
  std::vector<Shdr> headers(count);
  std::memcpy(headers.data(), table.data(), table.size());
  if (names_index >= count)
    f.fail("malformed ELF: the section-name table index " + std::to_string(names_index) + " is out of range");
  const auto& names_header = headers[names_index];
  auto names = f.read(names_header.sh_offset, names_header.sh_size, "the section-name table");
  out.reserve(count);
  for (const auto& sh : headers) {
    Section s;
    if (sh.sh_name < names.size())
      s.name.assign(names.c_str() + sh.sh_name, strnlen(names.c_str() + sh.sh_name, names.size() - sh.sh_name));
    s.type = sh.sh_type;
    s.address = sh.sh_addr;
    s.offset = sh.sh_offset;
    s.size = sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size;
    if (s.offset > f.size() || s.size > f.size() - s.offset)
      f.fail("truncated or malformed ELF: section " + (s.name.empty() ? std::string("?") : s.name) + " (" +
             std::to_string(s.size) + " bytes at offset " + std::to_string(s.offset) +
             ") lies beyond the end of the file");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::vector<Section> read_sections(const ObjectFile& file) {
  unsigned char head[sizeof(Elf64_Ehdr)] = {};
  if (file.size() < EI_NIDENT) file.fail("not an ELF object (shorter than an ELF identification)");
  file.read_into(head, 0, std::min<std::uint64_t>(sizeof head, file.size()), "the ELF header");
  if (std::memcmp(head, ELFMAG, SELFMAG) != 0) file.fail("not an ELF object");
  if (head[EI_DATA] != ELFDATA2LSB) file.fail("a big-endian ELF object (only little-endian is read)");
  if (head[EI_CLASS] == ELFCLASS64 && file.size() >= sizeof(Elf64_Ehdr))
    return read_as<Elf64_Ehdr, Elf64_Shdr>(file, head);
  if (head[EI_CLASS] == ELFCLASS32 && file.size() >= sizeof(Elf32_Ehdr))
    return read_as<Elf32_Ehdr, Elf32_Shdr>(file, head);
  file.fail("truncated ELF: the file is shorter than its ELF header");
}

std::optional<Section> find_section(const std::vector<Section>& sections, const std::string& name) {
  for (const auto& s : sections)
    if (s.name == name) return s;
  return std::nullopt;
}

}  // namespace provkit::elf
