#include "libraries.hpp"

namespace provkit::ccshim {

namespace {

bool same_abi(const elf::Identity& a, const elf::Identity& b) {
  return a.elf_class == b.elf_class && a.machine == b.machine;
}

}  // namespace

std::optional<fs::path> resolve_exact_library(const std::string& name, const std::vector<fs::path>& l_dirs,
                                              const elf::Identity& target, const SearchContext& ctx) {
  auto accept = [&](const fs::path& candidate) {
    auto id = ctx.probe(candidate);
    return id && same_abi(*id, target);
  };
  auto absolute = [](const fs::path& p) { return fs::absolute(p).lexically_normal(); };
  for (const auto* dirs : {&l_dirs, &ctx.library_path}) {
    for (const auto& dir : *dirs)
      if (accept(dir / name)) return absolute(dir / name);
  }
  if (ctx.ld_so_cache) {
    for (const auto& entry : ctx.ld_so_cache())
      if (entry.name == name && accept(entry.path)) return absolute(entry.path);
  }
  for (const auto& dir : ctx.default_dirs)
    if (accept(dir / name)) return absolute(dir / name);
  return std::nullopt;
}

std::optional<fs::path> library_past_incompatible(const std::string& name, const std::vector<fs::path>& l_dirs,
                                                  bool static_only, const elf::Identity& target,
                                                  const SearchContext& ctx) {
  bool skipped = false;
  std::vector<std::string> files;
  if (!static_only) files.push_back("lib" + name + ".so");
  files.push_back("lib" + name + ".a");
  for (const auto* dirs : {&l_dirs, &ctx.library_path, &ctx.system_library_dirs}) {
    for (const auto& dir : *dirs) {
      for (const auto& file : files) {
        auto candidate = dir / file;
        if (!ctx.is_regular_file(candidate)) continue;
        auto id = ctx.probe(candidate);
        if (id && !same_abi(*id, target)) {  // GNU ld: "skipping incompatible"
          skipped = true;
          continue;
        }
        // An ELF of the target, or an archive or linker script: what ld takes.
        if (!skipped) return std::nullopt;
        return fs::absolute(candidate).lexically_normal();
      }
    }
  }
  return std::nullopt;
}

}  // namespace provkit::ccshim
