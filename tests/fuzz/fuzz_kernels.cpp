// libFuzzer target: the GPU kernel readers (kernels/listing: fatbin containers, clang offload bundles plain and
// CCOB-compressed, fatbins kept as data, the cubins' kernel count through zstd) with small budgets on. The
// input's first byte picks the section (.nv_fatbin, .hip_fatbin, .ldata, __nv_relfatbin), the rest is its
// bytes, in an ELF object of that one section. Whatever the input, the listing ends with what it read and
// its problems (or, for an object that is not ELF, a provkit::Error), and never decompresses past a budget:
// a bundle by at most one 4 KiB block, a cubin not at all.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "host/code_verdict.hpp"
#include "provkit/error.hpp"
#include "provkit/kernels/listing.hpp"
#include "support/elf_with_section.hpp"

using namespace provkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kSections[] = {".nv_fatbin", ".hip_fatbin", ".ldata", "__nv_relfatbin"};
  static const std::string path = "/tmp/fuzz-kernels-" + std::to_string(::getpid()) + ".so";
  const std::string section(reinterpret_cast<const char*>(data) + 1, size - 1);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << provkit::test::elf_with_section(kSections[data[0] % 4], section);
  }
  const kernels::Budget budget{.file_inflated = 1 << 20,
                               .file_entries = 4096,
                               .file_inflating = std::chrono::seconds(5),
                               .run_inflated = 3 << 20};
  kernels::RunBudget run(budget);
  try {
    auto lib = kernels::list_kernels(
        path, true, [](const std::vector<kernels::Image>&) { return false; }, {.window = 4096, .windows = 4}, &run);
    kernels::count_cubin_kernels(
        lib, [](const kernels::Image&) { return true; }, &run);
    if (lib.spent.inflated > budget.file_inflated + 4096 || lib.spent.entries > budget.file_entries ||
        run.inflated() > budget.run_inflated)
      std::abort();
    std::size_t code_objects = 0;
    for (const auto& i : lib.images) code_objects += i.kind == kernels::Kind::code_object;
    if (code_objects > lib.spent.entries) std::abort();
    (void)host::code_verdict::judge(lib, {.label = "sm_90", .cc = gpucode::Version{9, 0}}, 13000);
    (void)host::code_verdict::judge(lib, {.label = "gfx90a", .gfx = "gfx90a"}, 0);
  } catch (const provkit::Error&) {}
  return 0;
}
