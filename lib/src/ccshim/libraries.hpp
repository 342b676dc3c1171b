#pragma once
// How cc-shim finds the library GNU ld would link where zig's lld would take another: `-l:NAME` resolved
// as ld resolves it (ld.so.cache included), and `-lNAME` past files of another ELF class or machine, which
// GNU ld skips as "incompatible" and lld does not.
#include <optional>
#include <string>
#include <vector>

#include "context.hpp"

namespace provkit::ccshim {

// The first `dir/name` among the -L dirs (`l_dirs`, command-line order), then
// LIBRARY_PATH, then ld.so.cache entries named `name`, then the default dirs,
// that is an ELF of the target's class and machine.
std::optional<fs::path> resolve_exact_library(const std::string& name, const std::vector<fs::path>& l_dirs,
                                              const elf::Identity& target, const SearchContext& ctx);

// For `-lNAME`: when the first libNAME.so / libNAME.a that zig would take
// (-L dirs, then LIBRARY_PATH, then ctx.system_library_dirs; only .a when
// `static_only`) is an ELF of another class or machine, the first one GNU ld
// would take instead (it skips "incompatible" files). nullopt when nothing is
// skipped (zig finds the same file) or nothing fits.
std::optional<fs::path> library_past_incompatible(const std::string& name, const std::vector<fs::path>& l_dirs,
                                                  bool static_only, const elf::Identity& target,
                                                  const SearchContext& ctx);

}  // namespace provkit::ccshim
