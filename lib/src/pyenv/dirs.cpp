#include "provkit/pyenv/dirs.hpp"

#include "provkit/util/fs.hpp"

namespace provkit::pyenv {

std::filesystem::path wheel_cache_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (auto env = util::getenv_str("ENVBUILD_CACHE_DIR"); !env.empty()) return env;
  return util::user_cache_dir() / "provkit" / "envbuild";
}

std::filesystem::path pythons_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (auto env = util::getenv_str("ENVBUILD_PYTHON_DIR"); !env.empty()) return env;
  auto data = util::getenv_str("XDG_DATA_HOME");
  if (data.empty()) data = util::getenv_str("HOME") + "/.local/share";
  return std::filesystem::path(data) / "provkit" / "pythons";
}

}  // namespace provkit::pyenv
