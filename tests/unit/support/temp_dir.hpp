// A unique temporary directory under $TMPDIR (or /tmp), removed with everything
// in it when the object goes out of scope, so a failing test leaves nothing behind.
#pragma once

#include <filesystem>
#include <string_view>

namespace provkit::test {

class TempDir {
 public:
  // `tag` names the directory (provkit-TAG-XXXXXX) so a leftover one says which test made it.
  explicit TempDir(std::string_view tag = "unit");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path operator/(const std::filesystem::path& relative) const { return path / relative; }
  // Writes `content` to the file `relative` (parents created) and returns its path.
  std::filesystem::path write(const std::filesystem::path& relative, std::string_view content) const;

  const std::filesystem::path path;
};

}  // namespace provkit::test
