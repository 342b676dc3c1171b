#pragma once
// What the cc-shim unit tests share: a fake file system of ELF and response files behind a SearchContext
// (and counters of what the translation looked at), and the translation with what the shim adds around
// every command line taken off.
#include <elf.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ccshim/context.hpp"
#include "ccshim/invocation.hpp"
#include "ccshim/translate.hpp"

namespace ccshim_test {

using Args = std::vector<std::string>;
namespace fs = std::filesystem;

inline const provkit::elf::Identity x86_64{ELFCLASS64, EM_X86_64, ET_DYN};
inline const provkit::elf::Identity i386{ELFCLASS32, EM_386, ET_DYN};
inline const provkit::elf::Identity aarch64{ELFCLASS64, EM_AARCH64, ET_DYN};

// A file system of ELF files and response files, and counters to see what
// the translation looked at.
struct FakeSystem {
  std::map<std::string, provkit::elf::Identity> elves;
  std::map<std::string, std::string> response_files;
  std::set<std::string> other_files;  // regular files that are not ELF (archives, linker scripts)
  std::vector<provkit::elf::CacheEntry> cache;
  std::vector<std::string> probed;
  std::optional<std::string> glibc;  // the host's glibc; none unless a test says so
  int cache_reads = 0;
  int glibc_reads = 0;

  provkit::ccshim::SearchContext context() {
    provkit::ccshim::SearchContext ctx;
    ctx.host = x86_64;
    ctx.default_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib"};
    ctx.ld_so_cache = [this] {
      ++cache_reads;
      return cache;
    };
    ctx.probe = [this](const fs::path& p) -> std::optional<provkit::elf::Identity> {
      probed.push_back(p.string());
      auto it = elves.find(p.string());
      if (it == elves.end()) return std::nullopt;
      return it->second;
    };
    ctx.is_regular_file = [this](const fs::path& p) {
      return elves.count(p.string()) > 0 || other_files.count(p.string()) > 0;
    };
    ctx.read_response_file = [this](const fs::path& p) -> std::optional<std::string> {
      auto it = response_files.find(p.string());
      if (it == response_files.end()) return std::nullopt;
      return it->second;
    };
    ctx.glibc_version = [this] {
      ++glibc_reads;
      return glibc;
    };
    return ctx;
  }
};

// The translation of a command line as plan() makes it: read once (response files expanded), then translated.
inline Args translated(const Args& args, const provkit::ccshim::SearchContext& ctx) {
  return provkit::ccshim::translate(provkit::ccshim::parse_invocation(args, ctx), ctx);
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// What the shim puts after -Wno-error=... on every command line (gcc's
// defaults: no _DEBUG, PIE code, a PIE link) when the command line does not
// say otherwise.
inline bool is_gcc_default(const std::string& a) {
  return a == "-U_DEBUG" || a == "-UNDEBUG" || a == "-ffp-exception-behavior=maytrap" || a == "-fPIE" || a == "-pie";
}

// The translation minus what the shim adds around every command line (the
// leading -fno-sanitize=all, -Wno-error=... and gcc's defaults, the trailing
// -Wno-...), for rules that are not about those.
inline Args body(const Args& out) {
  REQUIRE(!out.empty());
  REQUIRE(out.front() == "-fno-sanitize=all");
  auto first = out.begin() + 1;
  while (first != out.end() && starts_with(*first, "-Wno-error=")) ++first;
  while (first != out.end() && is_gcc_default(*first)) ++first;
  auto last = out.end();
  while (last != first && starts_with(*(last - 1), "-Wno-")) --last;
  return Args(first, last);
}

// What the shim adds around the caller's arguments, without a glibc target.
inline Args without_defaults(const Args& out) {
  Args kept;
  for (const auto& a : out)
    if (a != "-fno-sanitize=all" && !starts_with(a, "-Wno-") && !is_gcc_default(a)) kept.push_back(a);
  return kept;
}

}  // namespace ccshim_test
