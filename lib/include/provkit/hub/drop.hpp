#pragma once
// Dropping the split parts of a verified assembly (`hf-fetch --drop-parts`):
// once an assembly output's sha256 is known and matched, its parts are
// removed from the layout (the cache: the part's snapshot link, and its blob
// when no snapshot link of the repository names it any more; a local dir:
// the part file and its metadata). Each dropped part leaves a record beside
// the verified stamps, `<state dir>/dropped/<part>.stamp`, naming the output
// it went into and that output's sha256 and size, so that a later run finds
// the part "dropped", not missing: a fetch that honours the records treats it
// as in place while its output still verifies, and --verify-only reports it
// DROPPED (the output is verified as its own line).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "provkit/hub/cache_layout.hpp"
#include "provkit/hub/manifest.hpp"

namespace provkit::hub {

// What a dropped part's record says.
struct DropRecord {
  std::string output;  // the assembly output the part went into
  std::string sha256;  // the output's, as verified when the part was dropped
  std::uint64_t size = 0;
};

std::string drop_record_text(const DropRecord& r);
// Nothing when `text` is not a record.
std::optional<DropRecord> parse_drop_record(const std::string& text);

// Where the record of `part` lives.
std::filesystem::path drop_record_path(const hfcache::Layout& layout, const std::string& part);

// The parts of `m` that are dropped: absent from the layout, with a record
// naming an assembly of `m` that lists the part and whose sha256 is the
// record's. With `verify_outputs`, also only where that output verifies now
// (its verified stamp vouches for it, else it is hashed once; the stamp is
// written then): a fetch relies on the output instead of the parts. Without
// it (--verify-only), the record alone; the output is verified on its own line.
struct DroppedParts {
  std::map<std::string, std::string> parts;  // part path -> output
  bool contains(const std::string& part) const { return parts.count(part) != 0; }
  // The output `part` went into, or nullptr.
  const std::string* output_of(const std::string& part) const;
};
DroppedParts find_dropped_parts(const Manifest& m, const hfcache::Layout& layout, bool verify_outputs);

// Parts removed after the output of one assembly verified.
struct DroppedPart {
  std::string path;
  std::string output;
  std::uint64_t freed_bytes = 0;  // disk given back (0: its blob is still named by another link)
};

// Which parts of assembly `index` of `m` may go now: every part that no other assembly still needs
// (an assembly after it, or one that did not verify: `verified[j]`, for the assemblies before it).
std::vector<std::string> droppable_parts(const Manifest& m, std::size_t index, const std::vector<bool>& verified);

// Drops `parts` of the assembly `e`, whose output verified with `sha256` and `size`: writes the output's
// verified stamp (so a later run need not read it), each part's record, then removes the part
// (Layout::remove_file with the blob name `etags` gives it). `warning` receives a stamp not written.
std::vector<DroppedPart> drop_parts(hfcache::Layout& layout, const AssembleEntry& e, const std::string& sha256,
                                    std::uint64_t size, const std::vector<std::string>& parts,
                                    const std::map<std::string, std::string>& etags, std::string& warning);

// The disk a fetch that drops parts needs at its peak, assembly by assembly in manifest order: the outputs
// written so far, less the parts already dropped, at its largest. `sizes`: each assembly's output bytes
// still to write, `freed`: the part bytes dropped after it verifies.
std::uint64_t peak_assembly_bytes(const std::vector<std::uint64_t>& sizes, const std::vector<std::uint64_t>& freed);

}  // namespace provkit::hub
