#pragma once
// cc-shim's own options, the tool's (not the library's): --shim-help, --shim-version, --shim-info, --shim-warm
// and `cc-shim install DIR` (docs/cc-shim.md). Everything else is a compile, ccshim::plan's.
#include <optional>
#include <string>
#include <vector>

#include "provkit/ccshim/plan.hpp"

namespace ccshim_tool {

// The reply to one of the shim's own options in `args` (argv without argv[0] and --shim-cxx; `cxx`: the
// shim runs zig c++) as `argv0`; nullopt when `args` is a compile.
std::optional<provkit::ccshim::Reply> own_option(const std::vector<std::string>& args, const std::string& argv0,
                                                 bool cxx);

}  // namespace ccshim_tool
