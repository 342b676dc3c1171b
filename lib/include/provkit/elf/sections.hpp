#pragma once
// An object's section table: names, file offsets and sizes, read from the
// section headers and the section-name string table only (a few KiB of a
// file of any size). Malformed tables are refused with provkit::Error
// (check_failed) naming the file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "provkit/elf/object_file.hpp"

namespace provkit::elf {

struct Section {
  std::string name;           // ".nv_fatbin"
  std::uint32_t type = 0;     // sh_type (SHT_PROGBITS = 1, SHT_NOBITS = 8)
  std::uint64_t address = 0;  // sh_addr
  std::uint64_t offset = 0;   // sh_offset: where its bytes are in the file
  std::uint64_t size = 0;     // its bytes in the file (0 for SHT_NOBITS)
};

// Every section of `file`, in table order; empty when it has no section
// table (a stripped-of-sections object). Each section's bytes lie inside the
// file (checked), so a caller may read [offset, offset + size).
std::vector<Section> read_sections(const ObjectFile& file);

// The section called `name`, if any.
std::optional<Section> find_section(const std::vector<Section>& sections, const std::string& name);

}  // namespace provkit::elf
