#pragma once
// cc-shim's argument translation: a gcc command line (read once, invocation.hpp)
// in, the `zig cc` command line out. A pure function of the Invocation and a
// SearchContext (docs/cc-shim.md lists the rules and why each exists).
#include <string>
#include <vector>

#include "context.hpp"
#include "invocation.hpp"

namespace provkit::ccshim {

// The whole translation, every rule applied. The result is what follows `zig cc` on the command line:
//   [-target <arch>-linux-gnu.<host glibc, at most zig's newest> [-march=native]]
//   [-fno-sanitize=all] [-Wno-error=... for clang errors that gcc only warns about]
//   -U_DEBUG [-fPIE] [-pie]
//   translated arguments
//   [-Wno-... for clang's default warnings that gcc does not give]
//   [-idirafter <system include dirs>] [-L<LIBRARY_PATH and system library dirs>]
std::vector<std::string> translate(const Invocation& inv, const SearchContext& ctx);

}  // namespace provkit::ccshim
