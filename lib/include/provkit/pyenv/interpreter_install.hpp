#pragma once
// `envbuild python install`: a standalone CPython build (python-build-standalone
// layout: python/bin/python3, python/lib/...; .tar.gz or .tar.zst) checked by
// sha256 and unpacked with libarchive into a managed directory, published by
// rename as <managed>/cpython-<version>-<machine>-<sha8>/ where --python X.Y finds it.
#include <filesystem>
#include <string>

namespace provkit::pyenv {

namespace fs = std::filesystem;

struct PythonInstall {
  fs::path dir;     // the published directory
  fs::path python;  // dir/python/bin/python3.X
  std::string version;
  bool already = false;  // it was installed before
};

PythonInstall install_python(const std::string& archive_or_url, const std::string& sha256, const fs::path& managed_dir,
                             const fs::path& cache_dir);

// Unpacks a tar archive (any compression libarchive reads) into `dest`,
// refusing absolute paths, '..' and links that point outside `dest`.
void extract_tar(const fs::path& archive, const fs::path& dest);

}  // namespace provkit::pyenv
