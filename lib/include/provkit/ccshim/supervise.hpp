#pragma once
// Running zig under cc-shim rather than exec'ing it: what has to happen after zig
// ends (a scratch directory removed, an output copied where gcc would have written it, lld's stderr read
// through the shim) needs the shim still there.
#include <functional>
#include <string_view>

#include "provkit/ccshim/plan.hpp"

namespace provkit::ccshim {

// True for a line lld prints where GNU ld is silent: a version script naming a symbol that is not defined
// ("ld.lld: warning: version script assignment of 'local' to symbol 'gz_intmax' failed: symbol not
// defined"). GNU ld ignores such names; lld 16 warns, and zig 0.11 refuses -Wl,--undefined-version.
bool silent_in_gnu_ld(std::string_view line);

// Runs `run` (its env already set in this process) and waits for it, its stderr through `to_stderr` with
// silent_in_gnu_ld lines left out when run.filter_linker_warnings; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent
// to the shim are passed on to zig. Then, when zig succeeded, copies each of run.outputs, and in every case
// removes run.scratch_dir. Returns the exit status for the shim to exit with (zig's), or re-raises the signal
// that ended zig. Throws provkit::Error (usage) when zig cannot be started.
int supervise(const Exec& run, const std::function<void(std::string_view)>& to_stderr);

// A new directory for one run (Exec::scratch_dir) under `parent` (created when missing); throws
// provkit::Error (usage) naming it when it cannot be made.
std::string make_scratch_dir(const std::string& parent);

}  // namespace provkit::ccshim
