#include "provkit/pyenv/dirs.hpp"

#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::pyenv {

std::filesystem::path wheel_cache_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (auto env = util::env_value(util::EnvVar::envbuild_cache_dir); !env.empty()) return env;
  return util::user_cache_dir() / "provkit" / "envbuild";
}

}  // namespace provkit::pyenv
