#include "support/temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

namespace fs = std::filesystem;

namespace provkit::test {
namespace {

fs::path make_unique_dir(std::string_view tag) {
  std::string pattern = (fs::temp_directory_path() / ("provkit-" + std::string(tag) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  return pattern;
}

}  // namespace

TempDir::TempDir(std::string_view tag) : path(make_unique_dir(tag)) {}

fs::path TempDir::write(const fs::path& relative, std::string_view content) const {
  fs::path file = path / relative;
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out.flush()) throw std::system_error(errno, std::generic_category(), "writing " + file.string());
  return file;
}

TempDir::~TempDir() {
  // A test may leave a directory without write access; give it back so removal succeeds.
  std::error_code ignored;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
  std::error_code walk;
  for (fs::recursive_directory_iterator it(path, walk), end; !walk && it != end; it.increment(walk)) {
    if (it->is_directory(ignored) && !it->is_symlink(ignored))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
  }
  fs::remove_all(path, ignored);
}

}  // namespace provkit::test
