#pragma once
// Where envbuild keeps its wheel cache and managed interpreters when not told.
#include <filesystem>
#include <string>

namespace provkit::pyenv {

// `given` when not empty, else $ENVBUILD_CACHE_DIR, else the user cache (XDG) /provkit/envbuild.
std::filesystem::path wheel_cache_dir(const std::string& given);
// `given` when not empty, else $ENVBUILD_PYTHON_DIR, else $XDG_DATA_HOME (~/.local/share) /provkit/pythons.
std::filesystem::path pythons_dir(const std::string& given);

}  // namespace provkit::pyenv
