#include "provkit/pyenv/dirs.hpp"

#include "provkit/util/fs.hpp"

namespace provkit::pyenv {

std::filesystem::path wheel_cache_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (auto env = util::getenv_str("ENVBUILD_CACHE_DIR"); !env.empty()) return env;
  return util::user_cache_dir() / "provkit" / "envbuild";
}

}  // namespace provkit::pyenv
