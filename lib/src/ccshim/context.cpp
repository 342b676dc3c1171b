#include "context.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>

#include "provkit/error.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/paths.hpp"
#include "target.hpp"

namespace provkit::ccshim {

namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// A response file: a regular file, or a pipe or FIFO (`@<(echo -DNDEBUG)`, which shells give as
// /dev/fd/N), read to its end, at most util::kReadFileMax bytes. Opened without blocking (a FIFO with no
// writer reads as empty, never hangs); a device or directory is no response file (nullopt, as unreadable).
std::optional<std::string> read_response_text(const fs::path& p) {
  // One open, owned by util::Fd: a FIFO is not reopened (a writer waiting on it would see no reader between
  // two opens), and read_bounded is the one bounded read.
  util::Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) return std::nullopt;
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  try {
    return util::read_bounded(fd.get(), util::kReadFileMax, p.string());
  } catch (const Error&) {
    return std::nullopt;  // unreadable or too long: as gcc, the argument stays as it is
  }
}

}  // namespace

FileReader read_each_file_once(FileReader read) {
  auto seen = std::make_shared<std::map<fs::path, std::optional<std::string>>>();
  return [seen, read = std::move(read)](const fs::path& p) -> std::optional<std::string> {
    if (auto it = seen->find(p); it != seen->end()) return it->second;
    return seen->emplace(p, read(p)).first->second;
  };
}

std::optional<std::string> host_glibc_version(const elf::Identity& host, const std::vector<fs::path>& dirs) {
  elf::SearchContext loader;
  loader.default_dirs = dirs;
  loader.want = host;
  auto libc = elf::find_library("libc.so.6", loader);
  if (!libc.path) {
    loader.cache = elf::read_ld_so_cache();
    libc = elf::find_library("libc.so.6", loader);
  }
  if (!libc.path) return std::nullopt;
  return elf::glibc_version(*libc.path);
}

SearchContext system_context() {
  SearchContext ctx;
  for (auto& dir : util::split_path_list(util::env_value(util::EnvVar::library_path)))
    ctx.library_path.emplace_back(dir);
  ctx.ld_so_cache = [] { return elf::read_ld_so_cache(); };
  ctx.default_dirs = elf::default_library_dirs();
  ctx.host = elf::host_identity();
  ctx.probe = [](const fs::path& p) { return elf::read_identity(p); };
  ctx.is_regular_file = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
  };
  // plan() expands the command line once (parse_invocation); a file named
  // again there (twice, or from another @file) gets the first read's bytes, as
  // a pipe (`@<(...)`) gives them only once.
  ctx.read_response_file = read_each_file_once(read_response_text);
  // The system's libc.so.6: in the loader's default dirs (where glibc
  // installs it), else wherever /etc/ld.so.cache says. The default dirs
  // first, as reading the cache costs more than the rest of a call.
  ctx.glibc_version = [host = ctx.host, dirs = ctx.default_dirs,
                       memo = std::make_shared<std::optional<std::optional<std::string>>>()]() {
    if (!*memo) *memo = host_glibc_version(host, dirs);
    return **memo;
  };
  auto existing = [](std::initializer_list<std::string> dirs) {
    std::vector<fs::path> out;
    for (const auto& d : dirs) {
      std::error_code ec;
      if (fs::is_directory(d, ec)) out.emplace_back(d);
    }
    return out;
  };
  if (auto ma = multiarch_triple(ctx.host); !ma.empty()) {
    ctx.system_include_dirs = existing({"/usr/local/include", "/usr/include/" + ma, "/usr/include"});
    // GNU ld's SEARCH_DIRs on Debian/Ubuntu, in its order (`ld --verbose`).
    ctx.system_library_dirs = existing({"/usr/local/lib/" + ma, "/lib/" + ma, "/usr/lib/" + ma, "/usr/local/lib64",
                                        "/lib64", "/usr/lib64", "/usr/local/lib", "/lib", "/usr/lib"});
    // Debian's libc6-dev: what gcc's specs take (crt1.o crti.o ... -lc) and its headers.
    HostLibc libc{"/usr/include", "/usr/include/" + ma, "/usr/lib/" + ma};
    if (is_file(libc.include_dir / "stdlib.h") && is_file(libc.sys_include_dir / "sys" / "errno.h") &&
        is_file(libc.crt_dir / "crt1.o") && is_file(libc.crt_dir / "crti.o") && is_file(libc.crt_dir / "crtn.o") &&
        is_file(libc.crt_dir / "libc.so"))
      ctx.host_libc = libc;
  }
  return ctx;
}

}  // namespace provkit::ccshim
