#pragma once
// cc-shim: a gcc command line in, `zig cc` run with the translated one.
// The parts, each its own header (later the ccshim/ folder):
//   ccshim_context.hpp    SearchContext: every fact the translation asks of the system
//   ccshim_options.hpp    the tables of gcc's and GNU ld's options and of warnings
//   ccshim_response.hpp   @file expansion in, zig's response file out
//   ccshim_translate.hpp  the translation itself, and gcc's self-queries
//   ccshim_zig.hpp        finding zig, its version and caches, the cc links
#include "context.hpp"
#include "provkit/ccshim/supervise.hpp"
#include "response.hpp"
#include "translate.hpp"
#include "zig.hpp"
