#include "provkit/pyenv/interpreter_install.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "provkit/download/url_source.hpp"
#include "provkit/error.hpp"
#include "provkit/pyenv/interpreter.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/wheels/index.hpp"
#include "provkit/wheels/zip.hpp"

namespace provkit::pyenv {

using namespace wheels;

void extract_tar(const fs::path& archive_path, const fs::path& dest) {
  std::unique_ptr<archive, int (*)(archive*)> in(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(in.get());
  archive_read_support_format_tar(in.get());
  archive_read_support_format_gnutar(in.get());
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 20) != ARCHIVE_OK)
    throw Error(ExitCode::usage, archive_path.string() + ": cannot open as a tar archive: " + archive_error(in.get()));
  std::unique_ptr<archive, int (*)(archive*)> out(archive_write_disk_new(), archive_write_free);
  archive_write_disk_set_options(
      out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                     ARCHIVE_EXTRACT_SECURE_SYMLINKS);  // names are checked above, then prefixed with dest
  archive_entry* entry = nullptr;
  int r;
  while ((r = archive_read_next_header(in.get(), &entry)) == ARCHIVE_OK) {
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    fs::path rel(name);
    if (!util::is_safe_relative_path(name, util::Trailing::slash_allowed))
      throw Error(ExitCode::check_failed,
                  archive_path.filename().string() + ": entry '" + name + "' escapes the target; refused");
    if (const char* link = archive_entry_symlink(entry)) {
      fs::path target = rel.parent_path() / link;
      if (fs::path(link).is_absolute() || !util::is_within(target, dest))
        throw Error(ExitCode::check_failed, archive_path.filename().string() + ": link '" + name + "' -> '" + link +
                                                "' points outside the archive; refused");
    }
    if (const char* hard = archive_entry_hardlink(entry)) {
      if (!util::is_safe_relative_path(hard))
        throw Error(ExitCode::check_failed, archive_path.filename().string() + ": hard link '" + name + "' refused");
      archive_entry_set_hardlink(entry, (dest / hard).c_str());
    }
    archive_entry_set_pathname(entry, (dest / rel).c_str());
    if (archive_write_header(out.get(), entry) != ARCHIVE_OK)
      throw Error(ExitCode::check_failed,
                  archive_path.filename().string() + ": cannot extract '" + name + "': " + archive_error(out.get()));
    const void* block;
    size_t size;
    la_int64_t offset;
    for (;;) {
      int rb = archive_read_data_block(in.get(), &block, &size, &offset);
      if (rb == ARCHIVE_EOF) break;
      if (rb != ARCHIVE_OK)
        throw Error(ExitCode::check_failed, archive_path.filename().string() + ": corrupt archive at '" + name +
                                                "': " + archive_error(in.get()));
      if (archive_write_data_block(out.get(), block, size, offset) != ARCHIVE_OK)
        throw Error(ExitCode::check_failed, (dest / rel).string() + ": write error: " + archive_error(out.get()));
    }
    archive_write_finish_entry(out.get());
  }
  if (r != ARCHIVE_EOF)
    throw Error(ExitCode::check_failed,
                archive_path.filename().string() + ": corrupt archive: " + archive_error(in.get()));
}

PythonInstall install_python(const std::string& source, const std::string& sha256_in, const fs::path& managed_dir,
                             const fs::path& cache_dir) {
  std::string sha256 = util::lower(sha256_in);
  if (!util::is_hex(sha256, 64))
    throw Error(ExitCode::usage, "the sha256 given for " + source + " is not 64 hex digits");
  std::error_code ec;
  const util::Root managed(managed_dir);
  managed.make_dirs(managed_dir / ".tmp");  // never through a link planted below the managed dir
  fs::path archive_path;
  fs::path downloaded;
  if (source.rfind("http://", 0) == 0 || source.rfind("https://", 0) == 0) {
    auto name = source.substr(source.find_last_of('/') + 1);
    name = name.substr(0, name.find('?'));
    downloaded = managed_dir / ".tmp" / (sha256.substr(0, 16) + "-" + name);
    // Through the download engine, as wheels are: resumed from .tmp/ after a failure or a kill, in ranges, the
    // size learned from the server first (an archive's sha256 is all the caller states), checked before the rename.
    download::UrlFile file;
    file.url = source;
    file.sha256 = sha256;
    file.final_path = downloaded;
    file.partial_path = util::path_with_suffix(downloaded, ".partial");
    file.lock_path = managed_dir / ".locks" / (downloaded.filename().string() + ".lock");
    file.root = managed_dir;
    download::UrlSource url_source;
    download::Observer quiet;
    download::fetch_url_file(file, download::Options{}, url_source, quiet);
    archive_path = downloaded;
  } else {
    archive_path = source.rfind("file://", 0) == 0 ? fs::path(source.substr(7)) : fs::path(source);
    if (!fs::is_regular_file(archive_path, ec))
      throw Error(ExitCode::usage, archive_path.string() + ": archive not found");
    std::string got = util::sha256_file(archive_path);
    if (got != sha256)
      throw Error(ExitCode::check_failed, archive_path.string() + " has sha256 " + got + ", expected " + sha256);
  }
  fs::path work = util::temp_path_beside(managed_dir / ".tmp" / "unpack");
  managed.make_dirs(work);
  auto cleanup = [&] {
    fs::remove_all(work, ec);
    if (!downloaded.empty()) fs::remove(downloaded, ec);
  };
  try {
    extract_tar(archive_path, work);
    // python-build-standalone: python/bin/python3 ("install_only"), or python/install/... ("full").
    fs::path root = work / "python";
    if (!fs::exists(root / "bin" / "python3", ec) && fs::exists(root / "install" / "bin" / "python3", ec)) {
      fs::rename(root / "install", work / "install", ec);
      fs::remove_all(root, ec);
      fs::rename(work / "install", root, ec);
    }
    if (!fs::exists(root / "bin" / "python3", ec))
      throw Error(ExitCode::usage, archive_path.filename().string() +
                                       ": no python/bin/python3 inside; not a standalone CPython archive");
    Interpreter it = query_interpreter(root / "bin" / "python3", cache_dir);
    PythonInstall out;
    out.version = it.version();
    out.dir = managed_dir / ("cpython-" + it.version() + "-" + it.machine + "-" + sha256.substr(0, 8));
    out.python = out.dir / "python" / "bin" / ("python" + it.xy());
    if (fs::exists(out.dir / "python" / "bin" / "python3", ec)) {
      out.already = true;
    } else {
      if (!fs::exists(root / "bin" / ("python" + it.xy()), ec))
        fs::create_symlink("python3", root / "bin" / ("python" + it.xy()), ec);
      // Published by rename: a half-unpacked interpreter is never found by --python.
      util::rename_durable(work, out.dir);
    }
    cleanup();
    return out;
  } catch (...) {
    cleanup();
    throw;
  }
}

}  // namespace provkit::pyenv
