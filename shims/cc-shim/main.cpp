// cc-shim: a gcc-compatible `cc` that replaces itself with `zig cc` (or
// `zig c++`) after translating the command line. The shim's own options are
// answered here (commands.hpp); a compile is decided by ccshim::plan
// (provkit/ccshim/plan.hpp), and this prints it or execs zig.
// docs/cc-shim.md describes every option, translation and exit code.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "commands.hpp"
#include "provkit/ccshim/plan.hpp"
#include "provkit/ccshim/supervise.hpp"
#include "provkit/error.hpp"

namespace {

// stdio, not iostreams: <iostream>'s start-up work would be paid by every compile.
void print(std::FILE* to, const std::string& text) { std::fwrite(text.data(), 1, text.size(), to); }

int reply(const provkit::ccshim::Reply& r) {
  print(stdout, r.out);
  print(stderr, r.err);
  return r.code;
}

int shim(int argc, char** argv) {
  std::string argv0 = argc > 0 ? argv[0] : "cc-shim";
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  if (auto refused = provkit::ccshim::refuse_nested_run()) return reply(*refused);
  bool cxx = provkit::ccshim::called_as_cxx(argv0);
  if (!args.empty() && args[0] == "--shim-cxx") {
    cxx = true;
    args.erase(args.begin());
  }
  if (auto answer = ccshim_tool::own_option(args, argv0, cxx)) return reply(*answer);
  auto plan = provkit::ccshim::plan(args, argv0, cxx);
  if (auto* r = std::get_if<provkit::ccshim::Reply>(&plan)) return reply(*r);
  auto& run = std::get<provkit::ccshim::Exec>(plan);
  for (const auto& [name, value] : run.env) ::setenv(name.c_str(), value.c_str(), 1);
  if (!run.debug.empty() || !run.preface.empty()) {
    print(stderr, run.debug);
    print(stderr, run.preface);
    std::fflush(stderr);
  }
  if (!run.scratch_dir.empty()) {
    try {
      return provkit::ccshim::supervise(run, [](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stderr);
        std::fflush(stderr);
      });
    } catch (const provkit::Error& e) {
      print(stderr, std::string("cc-shim: ") + e.what() + "\n");
      return static_cast<int>(e.code());
    }
  }
  std::vector<char*> cargv;
  for (auto& a : run.argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ::execv(cargv[0], cargv.data());
  print(stderr, provkit::ccshim::exec_failed(run.argv[0], errno));
  return 2;  // ExitCode::usage, as for every other refusal
}

}  // namespace

// The catch of last resort, as the other tools have (cli::last_resort, whose iostreams cc-shim does not pay
// for): a sentence and exit 3, never an abort.
int main(int argc, char** argv) {
  try {
    return shim(argc, argv);
  } catch (const std::exception& e) {
    print(stderr, std::string("cc-shim: internal error: ") + e.what() + "\n");
  } catch (...) {
    print(stderr, "cc-shim: internal error: an unknown exception\n");
  }
  return 3;  // ExitCode::network, as cli::last_resort
}
