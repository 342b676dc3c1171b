#pragma once
// `envbuild capture`: packs each installed distribution of an environment (or
// any prefix with a site-packages) back into a wheel from its RECORD, and
// returns lock entries for them. Launchers generated from entry points are
// left out (installers write them again); other scripts go back to
// .data/scripts with a "#!python" shebang. WHEEL says "Generator: envbuild capture".
#include <filesystem>
#include <string>
#include <vector>

#include "provkit/pyspec/lock.hpp"

namespace provkit::pyenv {

namespace fs = std::filesystem;

struct CaptureResult {
  std::vector<pyspec::LockEntry> entries;  // one per wheel written, wheels[0].path relative to lock_dir
  std::vector<std::string> skipped;        // "name version: why"
  std::vector<std::string> warnings;
};

// `source`: an environment/prefix root, or a site-packages directory itself.
CaptureResult capture_env(const fs::path& source, const fs::path& wheelhouse, const fs::path& lock_dir, unsigned jobs);

// `envbuild capture`: capture_env, then the lock written atomically: a pylock (PEP 751) when `lock` ends in
// .toml (refused, exit 2, unless named as PEP 751 says, so that create can read it back), else a requirements
// file. `created_by` names the program in the lock.
CaptureResult capture_to_lock(const fs::path& source, const fs::path& wheelhouse, const fs::path& lock, unsigned jobs,
                              const std::string& created_by);

}  // namespace provkit::pyenv
