// cc-shim: a gcc-compatible `cc` that replaces itself with `zig cc` (or
// `zig c++`) after translating the command line. What to do is decided by
// ccshim::plan (provkit/ccshim/plan.hpp); this prints it or execs zig.
// docs/cc-shim.md describes every option, translation and exit code.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "provkit/ccshim/plan.hpp"
#include "provkit/ccshim/supervise.hpp"
#include "provkit/error.hpp"

namespace {

// stdio, not iostreams: <iostream>'s start-up work would be paid by every compile.
void print(std::FILE* to, const std::string& text) { std::fwrite(text.data(), 1, text.size(), to); }

int shim(int argc, char** argv) {
  std::string argv0 = argc > 0 ? argv[0] : "cc-shim";
  auto plan = provkit::ccshim::plan({argv + (argc > 0 ? 1 : 0), argv + argc}, argv0);
  if (auto* reply = std::get_if<provkit::ccshim::Reply>(&plan)) {
    print(stdout, reply->out);
    print(stderr, reply->err);
    return reply->code;
  }
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
