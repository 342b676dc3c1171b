#pragma once
// Where envbuild keeps its wheel cache when not told (its interpreters: pyfind::managed_dir).
#include <filesystem>
#include <string>

namespace provkit::pyenv {

// `given` when not empty, else $ENVBUILD_CACHE_DIR, else the user cache (XDG) /provkit/envbuild.
std::filesystem::path wheel_cache_dir(const std::string& given);

}  // namespace provkit::pyenv
