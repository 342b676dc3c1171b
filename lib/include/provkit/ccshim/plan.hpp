#pragma once
// One run of cc-shim decided: what to print and the exit code, or the zig command line to exec with the
// environment it needs. shims/cc-shim/main.cpp only prints or execs (docs/cc-shim.md has every case).
#include <string>
#include <utility>
#include <variant>
#include <vector>

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

// The run for `args` (argv without argv[0]) as `argv0`, reading the process environment (CC_SHIM_ZIG,
// CC_SHIM_DEBUG, ZIG_LIBC, the zig cache variables...). Long command lines and the host's libc file are
// handed to zig in memfds the exec inherits; --shim-info sets zig's cache variables before it runs zig.
Plan plan(std::vector<std::string> args, const std::string& argv0);

// "cc-shim: SENTENCE" after a failed exec of `zig` (errno `error`).
std::string exec_failed(const std::string& zig, int error);

}  // namespace provkit::ccshim
