#pragma once
// cc-shim's argument translation: a gcc command line
// in, the `zig cc` command line out. A pure function of the arguments and a
// SearchContext (docs/cc-shim.md lists the rules and why each exists).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "context.hpp"

namespace provkit::ccshim {

// The ELF class and machine the command line builds for: ctx.host unless
// -m32/-m64 or -target/--target= say otherwise.
elf::Identity target_identity(const std::vector<std::string>& args, const elf::Identity& host);

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

// The whole translation: response files expanded, then every rule applied.
// The result is what follows `zig cc` on the command line:
//   [-target <arch>-linux-gnu.<host glibc, at most zig's newest> [-march=native]]
//   [-fno-sanitize=all] [-Wno-error=... for clang errors that gcc only warns about]
//   -U_DEBUG [-fPIE] [-pie]
//   translated arguments
//   [-Wno-... for clang's default warnings that gcc does not give]
//   [-idirafter <system include dirs>] [-L<LIBRARY_PATH and system library dirs>]
std::vector<std::string> translate(const std::vector<std::string>& args, const SearchContext& ctx);

// The glibc release to name in zig's target: the host's, or the newest zig
// can build stubs for (`zig_newest`, "2.34") when the host's is newer.
std::string glibc_zig_can_build(const std::string& host, const std::optional<std::string>& zig_newest);

// The text of a zig libc file (ZIG_LIBC) naming the host's own C library
// (ctx.host_libc) when translate() sets the glibc target and the command line
// keeps the system headers; nullopt otherwise (zig then uses its bundled glibc).
std::optional<std::string> zig_libc_file(const std::vector<std::string>& args, const SearchContext& ctx);

// True when the linker is asked for its version (`-Wl,--version`,
// `-Xlinker --version`), as meson detects the linker; gcc's ld then prints
// its version and links nothing.
bool asks_linker_version(const std::vector<std::string>& args, const SearchContext& ctx);

// True when the command line links (no -c, -S, -E, -M, -MM, -fsyntax-only).
bool command_links(const std::vector<std::string>& args, const SearchContext& ctx);

// What gcc 12's driver and cc1 print about the command line itself, where zig's clang is silent: for each C
// source compiled (not under `cxx`, nor -x c++), "cc1: warning: command-line option '-fno-rtti' is valid
// for C++/D/ObjC++ but not for C" for -fno-rtti and -frtti (libtool's -fno-rtti probe reads it). Empty when
// there is nothing to say.
std::string gcc_driver_warnings(const std::vector<std::string>& args, bool cxx, const SearchContext& ctx);

// What gcc prints for a query the shim answers itself, without zig:
// `-dumpmachine` (the host's multiarch triple, "x86_64-linux-gnu") and
// `-print-multiarch` (the target's). nullopt when the command line is no such
// query, names its own target, or the host has no glibc (then zig answers).
std::optional<std::string> answer_query(const std::vector<std::string>& args, const SearchContext& ctx);

// Debian's multiarch triple for an ELF identity on a glibc host
// ("x86_64-linux-gnu", "i386-linux-gnu", "aarch64-linux-gnu"); empty when unknown.
std::string multiarch_triple(const elf::Identity& id);

}  // namespace provkit::ccshim
