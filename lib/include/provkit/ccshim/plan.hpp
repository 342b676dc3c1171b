#pragma once
// One compile of cc-shim decided: what to print and the exit code, or the zig command line to exec with the
// environment it needs. The shim's own options (--shim-info, --shim-warm, install...) are the tool's
// (shims/cc-shim/commands.cpp); shims/cc-shim/main.cpp prints or execs (docs/cc-shim.md has every case).
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "provkit/ccshim/zig.hpp"

namespace provkit::ccshim {

// Print `out` on stdout and `err` on stderr, then exit with `code`.
struct Reply {
  int code = 0;
  std::string out, err;
};

// Set `env`, print `debug` on stderr when not empty (CC_SHIM_DEBUG), then run `argv` (argv[0] is zig's path):
// exec it when `scratch_dir` is empty, else run it under the shim (ccshim/supervise.hpp), which then removes
// `scratch_dir` whatever happens.
struct Exec {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::string debug;
  // Printed on stderr before zig runs: what gcc's driver or cc1 says about the command line itself
  // (gcc_driver_warnings).
  std::string preface;
  // This run's own directory: zig's local cache (so that every compile runs clang and prints its
  // diagnostics, where zig's object cache would print nothing on a hit) and the files below.
  std::string scratch_dir;
  // An -o or -MF that is no regular file (/dev/null, a FIFO, /dev/stdout), or an -MF that is a link planted
  // at the name: zig writes `written` in scratch_dir, then the shim gives its bytes to `given`, written into
  // it as gcc writes them there or, with `replace_link`, in a file of its own that replaces the link (never
  // written through it). Nothing else is left anywhere.
  struct Output {
    std::string written, given;
    bool replace_link = false;
  };
  std::vector<Output> outputs;
  // zig's stderr read through the shim, without lld's lines that GNU ld does not print (silent_in_gnu_ld).
  bool filter_linker_warnings = false;
};

using Plan = std::variant<Reply, Exec>;

// What ends every run before anything else, the shim's own options included: zig's native libc detection
// running `cc` (ZIG_IS_DETECTING_LIBC_PATHS is set; exit 1) and the zig the shim started running it again
// (CC_SHIM_ACTIVE; exit 2). nullopt when the run may go on.
std::optional<Reply> refuse_nested_run();

// The compile for gcc's `args` (argv without argv[0] and the shim's own options; `cxx`: zig c++) as `argv0`,
// after refuse_nested_run, reading the process environment (CC_SHIM_ZIG, CC_SHIM_DEBUG, ZIG_LIBC, the zig
// cache variables...). The command line is read once (ccshim's Invocation) and every step takes that. Long
// command lines and the host's libc file are handed to zig in memfds the exec inherits.
Plan plan(const std::vector<std::string>& args, const std::string& argv0, bool cxx);

// "cc-shim: no zig found (looked at: ...)", exit 2.
Reply zig_not_found(const ZigSearch& search);

// "cc-shim: SENTENCE" after a failed exec of `zig` (errno `error`).
std::string exec_failed(const std::string& zig, int error);

}  // namespace provkit::ccshim
