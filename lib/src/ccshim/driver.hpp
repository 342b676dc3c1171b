#pragma once
// What gcc's driver says itself, without compiling, where the shim speaks for it: the answers to its
// self-queries, and cc1's warnings about the command line that zig's clang does not give.
#include <optional>
#include <string>

#include "context.hpp"
#include "invocation.hpp"

namespace provkit::ccshim {

// What gcc prints for a query the shim answers itself, without zig:
// `-dumpmachine` (the host's multiarch triple, "x86_64-linux-gnu") and
// `-print-multiarch` (the target's). nullopt when the command line is no such
// query, names its own target, or the host has no glibc (then zig answers).
std::optional<std::string> answer_query(const Invocation& inv, const SearchContext& ctx);

// What gcc 12's driver and cc1 print about the command line itself, where zig's clang is silent: for each C
// source compiled (not under `cxx`, nor -x c++), "cc1: warning: command-line option '-fno-rtti' is valid
// for C++/D/ObjC++ but not for C" for -fno-rtti and -frtti (libtool's -fno-rtti probe reads it). Empty when
// there is nothing to say.
std::string gcc_driver_warnings(const Invocation& inv, bool cxx);

}  // namespace provkit::ccshim
