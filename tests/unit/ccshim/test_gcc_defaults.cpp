// gcc's defaults that zig's do not match, put back by cc-shim: no NDEBUG
// (zig defines it in its release modes), and gcc's -ftrapping-math (no
// transformation raises an FP exception the source would not), as clang's
// -ffp-exception-behavior=maytrap, unless the caller chooses its own
// semantics. The rest of the translation is test_ccshim.cpp's.
#include <elf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ccshim/ccshim.hpp"

namespace ccshim = provkit::ccshim;
using Args = std::vector<std::string>;

namespace {

const provkit::elf::Identity x86_64{ELFCLASS64, EM_X86_64, ET_DYN};
const provkit::elf::Identity aarch64{ELFCLASS64, EM_AARCH64, ET_DYN};

// A host with no files at all: only the architecture matters here.
ccshim::SearchContext host_context() {
  ccshim::SearchContext ctx;
  ctx.host = x86_64;
  ctx.probe = [](const std::filesystem::path&) -> std::optional<provkit::elf::Identity> { return std::nullopt; };
  ctx.is_regular_file = [](const std::filesystem::path&) { return false; };
  ctx.read_response_file = [](const std::filesystem::path&) -> std::optional<std::string> { return std::nullopt; };
  return ctx;
}

// The command line read once, then translated, as plan() does.
Args translated(const Args& args, const ccshim::SearchContext& ctx) {
  return ccshim::translate(ccshim::parse_invocation(args, ctx), ctx);
}

}  // namespace

TEST_CASE("gcc defaults: floating-point code raises no exception the source does not (gcc's -ftrapping-math)",
          "[ccshim]") {
  auto has = [](const Args& out, const std::string& a) { return std::count(out.begin(), out.end(), a); };
  auto out = translated({"-O2", "-c", "w.c"}, host_context());
  auto maytrap = std::find(out.begin(), out.end(), "-ffp-exception-behavior=maytrap");
  REQUIRE(maytrap != out.end());
  CHECK(maytrap < std::find(out.begin(), out.end(), "w.c"));
  CHECK(has(translated({"-O3", "w.c", "-o", "w"}, host_context()), "-ffp-exception-behavior=maytrap") == 1);
  // The caller's own choice of FP semantics is theirs, by gcc's names or clang's.
  for (std::string own : {"-ffast-math", "-fno-fast-math", "-Ofast", "-ftrapping-math", "-fno-trapping-math",
                          "-funsafe-math-optimizations", "-fno-unsafe-math-optimizations",
                          "-ffp-exception-behavior=strict", "-ffp-model=fast"}) {
    out = translated({"-O2", own, "-c", "w.c"}, host_context());
    CHECK(has(out, "-ffp-exception-behavior=maytrap") == 0);
    CHECK(has(out, own) == 1);
  }
  // A value that only looks like one (a macro, an output name) is no choice.
  out = translated({"-D", "-ffast-math", "-c", "w.c", "-o", "-Ofast"}, host_context());
  CHECK(has(out, "-ffp-exception-behavior=maytrap") == 1);
  // Only for the host, and where clang implements it (on RISC-V it warns "unsupported").
  CHECK(has(translated({"-target", "riscv64-linux-gnu", "-c", "w.c"}, host_context()),
            "-ffp-exception-behavior=maytrap") == 0);
  auto ctx = host_context();
  ctx.host = aarch64;
  CHECK(has(translated({"-c", "w.c"}, ctx), "-ffp-exception-behavior=maytrap") == 1);
  ctx.host = provkit::elf::Identity{ELFCLASS64, EM_RISCV, ET_DYN};
  CHECK(has(translated({"-c", "w.c"}, ctx), "-ffp-exception-behavior=maytrap") == 0);
}

TEST_CASE(
    "gcc defaults: assert() stays on at every -O (zig defines NDEBUG in release modes), unless the caller "
    "defines NDEBUG",
    "[ccshim]") {
  for (std::string opt : {"-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"}) {
    auto out = translated({opt, "-c", "w.c"}, host_context());
    auto undef = std::find(out.begin(), out.end(), "-UNDEBUG");
    REQUIRE(undef != out.end());
    CHECK(undef < std::find(out.begin(), out.end(), opt));
  }
  auto out = translated({"-O2", "-DNDEBUG", "-c", "w.c"}, host_context());
  CHECK(std::find(out.begin(), out.end(), "-UNDEBUG") < std::find(out.begin(), out.end(), "-DNDEBUG"));
}
