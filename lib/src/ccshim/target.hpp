#pragma once
// What a cc-shim command line builds for: the ELF identity of its target, the names Debian and zig give
// that architecture, and the glibc the shim has zig build against (the target triple's release and the
// host's own libc files).
#include <optional>
#include <string>

#include "context.hpp"
#include "invocation.hpp"

namespace provkit::ccshim {

// The ELF class and machine the command line builds for: `host` unless
// -m32/-m64 or -target/--target= say otherwise (the last one wins).
elf::Identity target_identity(const Invocation& inv, const elf::Identity& host);

// Debian's multiarch triple for an ELF identity on a glibc host
// ("x86_64-linux-gnu", "i386-linux-gnu", "aarch64-linux-gnu"); empty when unknown.
std::string multiarch_triple(const elf::Identity& id);

// zig's name of an architecture in a target triple ("x86_64", "aarch64"); empty when zig gets no glibc
// target for it.
std::string zig_arch(const elf::Identity& id);

// True where zig's CPU for an explicit target (the baseline) is gcc's default on Debian (`-march=x86-64`,
// armv8-a); elsewhere the shim keeps zig's native CPU with -march=native.
bool zig_baseline_is_gccs(const elf::Identity& id);

// The glibc release to name in zig's target: the host's, or the newest zig
// can build stubs for (`zig_newest`, "2.34") when the host's is newer.
std::string glibc_zig_can_build(const std::string& host, const std::optional<std::string>& zig_newest);

// The glibc release the shim has zig build against, when it sets the target: the command line names no
// target and builds for the host's own ABI (no -m32), and the host has a glibc (ctx.glibc_version);
// at most ctx.zig_newest_glibc. nullopt otherwise: zig's own choice stands.
std::optional<std::string> shim_glibc(const Invocation& inv, const SearchContext& ctx);

// The text of a zig libc file (ZIG_LIBC) naming the host's own C library
// (ctx.host_libc) when the shim sets the glibc target and the command line
// keeps the system headers; nullopt otherwise (zig then uses its bundled glibc).
std::optional<std::string> zig_libc_file(const Invocation& inv, const SearchContext& ctx);

}  // namespace provkit::ccshim
