#pragma once
// cc-shim: a gcc command line in, `zig cc` run with the translated one.
// The parts, each its own header (those beside this one are private to the domain):
//   context.hpp     SearchContext: every fact the translation asks of the system
//   options.hpp     the tables of gcc's and GNU ld's options and of warnings
//   response.hpp    @file expansion in, zig's response file out
//   invocation.hpp  the command line read once: every step below takes its Invocation
//   target.hpp      what it builds for: target identity, arch names, the glibc and libc file zig gets
//   libraries.hpp   -l:NAME and -lNAME found as GNU ld finds them
//   driver.hpp      what gcc's driver says itself: query answers, cc1's command-line warnings
//   translate.hpp   the translation of the command line for zig
//   provkit/ccshim/plan.hpp, supervise.hpp, zig.hpp (public: the tool uses them) the run planned and
//     supervised; finding zig, its version and caches, the cc links
#include "context.hpp"
#include "driver.hpp"
#include "invocation.hpp"
#include "libraries.hpp"
#include "provkit/ccshim/supervise.hpp"
#include "provkit/ccshim/zig.hpp"
#include "response.hpp"
#include "target.hpp"
#include "translate.hpp"
