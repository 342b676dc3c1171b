#pragma once
// cc-shim: a gcc command line in, `zig cc` run with the translated one.
// The parts, each its own header (those beside this one are private to the domain):
//   context.hpp     SearchContext: every fact the translation asks of the system
//   options.hpp     the tables of gcc's and GNU ld's options and of warnings
//   response.hpp    @file expansion in, zig's response file out
//   translate.hpp   the translation itself, and gcc's self-queries
//   zig.hpp         finding zig, its version and caches, the cc links
//   provkit/ccshim/plan.hpp, supervise.hpp (public: the tool's main uses them) the run planned and supervised
#include "context.hpp"
#include "provkit/ccshim/supervise.hpp"
#include "response.hpp"
#include "translate.hpp"
#include "zig.hpp"
