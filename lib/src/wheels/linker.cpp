#include "provkit/wheels/linker.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::wheels {

const char* link_mode_name(LinkMode m) {
  switch (m) {
    case LinkMode::clone: return "clone";
    case LinkMode::hardlink: return "hardlink";
    case LinkMode::copy: return "copy";
  }
  return "?";
}

bool same_source(const struct stat& st, const SourceState& expected) {
  return S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) == expected.size &&
         (expected.mtime_ns == 0 ||
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec == expected.mtime_ns);
}

std::optional<LinkMode> parse_link_mode(std::string_view s) {
  if (s == "clone" || s == "reflink") return LinkMode::clone;
  if (s == "hardlink") return LinkMode::hardlink;
  if (s == "copy") return LinkMode::copy;
  return std::nullopt;
}

mode_t installed_file_mode(bool executable, unsigned umask) {
  return executable ? ((0777 & ~umask) | 0111) : (0666 & ~umask);
}

namespace {

using util::Fd;

// errno of a hardlink not made because the cache file's mode is not the one the installed file needs.
constexpr int kModeDiffers = -2;
// errno of a file not placed because its source is no longer what was unpacked (SourceState).
constexpr int kSourceChanged = -3;

// Opens `from` (a regular file, never through a link; as `expected` says, where given) and creates `to`
// with exactly `mode` (the umask taken off at creation is put back where `mode` has those bits); false and
// errno on failure.
bool open_pair(const FileAt& from, const FileAt& to, mode_t mode, const SourceState* expected, Fd& src, Fd& dst) {
  src = util::open_regular_beneath(from.dir, from.name, O_RDONLY);  // a FIFO or device is no file to copy
  if (!src) return false;
  if (struct stat st{}; expected && (::fstat(src.get(), &st) != 0 || !same_source(st, *expected))) {
    errno = kSourceChanged;
    return false;
  }
  dst.reset(::openat(to.dir, to.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!dst) return false;
  struct stat st {};
  if (::fstat(dst.get(), &st) == 0 && (st.st_mode & 07777) == mode) return true;
  if (::fchmod(dst.get(), mode) == 0) return true;
  int e = errno;
  ::unlinkat(to.dir, to.name.c_str(), 0);
  errno = e;
  return false;
}

void remove_keeping_errno(const FileAt& to) {
  int e = errno;
  ::unlinkat(to.dir, to.name.c_str(), 0);
  errno = e;
}

bool clone_file(const FileAt& from, const FileAt& to, mode_t mode, const SourceState* expected) {
  Fd src(-1), dst(-1);
  if (!open_pair(from, to, mode, expected, src, dst)) return false;
  if (::ioctl(dst.get(), FICLONE, src.get()) != 0) {
    remove_keeping_errno(to);
    return false;
  }
  return true;
}

// A hard link of `from` itself (linkat never follows the name), kept only when what it links is a regular
// file of exactly `mode`, and what `expected` says: a link or a FIFO swapped in at the source's name never
// reaches the environment, an edited cache file is taken back (errno kSourceChanged), and the shared inode
// never gives a file another mode than this run's umask would (errno kModeDiffers). One fstatat of the inode
// just linked, where opening each source would cost a warm create three calls a file.
bool hard_link(const FileAt& from, const FileAt& to, mode_t mode, const SourceState* expected) {
  if (::linkat(from.dir, from.name.c_str(), to.dir, to.name.c_str(), 0) != 0) return false;
  struct stat st {};
  bool regular = ::fstatat(to.dir, to.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
  bool as_unpacked = regular && (!expected || same_source(st, *expected));
  if (as_unpacked && (st.st_mode & 07777) == mode) return true;
  ::unlinkat(to.dir, to.name.c_str(), 0);
  errno = as_unpacked ? kModeDiffers : regular ? kSourceChanged : S_ISLNK(st.st_mode) ? ELOOP : util::kNotRegularFile;
  return false;
}

bool copy_bytes(const FileAt& from, const FileAt& to, mode_t mode, const SourceState* expected) {
  Fd src(-1), dst(-1);
  if (!open_pair(from, to, mode, expected, src, dst)) return false;
  for (;;) {
    ssize_t n = ::copy_file_range(src.get(), nullptr, dst.get(), nullptr, 1 << 30, 0);
    if (n == 0) return true;
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL) break;
    remove_keeping_errno(to);
    return false;
  }
  static thread_local char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(src.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (int e = util::write_all(dst.get(), buf, static_cast<std::size_t>(n)); e != 0) {
      errno = e;
      remove_keeping_errno(to);
      return false;
    }
  }
}

// The parent directory of a path the caller gave (links followed: the caller named it).
Fd parent_of(const fs::path& p) {
  fs::path dir = p.parent_path();
  return Fd(::open(dir.empty() ? "." : dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

[[noreturn]] void cannot_place(const FileAt& from, const FileAt& to, int err) {
  if (err == kSourceChanged) throw SourceChanged(from.shown);
  throw Error(ExitCode::check_failed, "cannot place " + to.shown.string() + " from " + from.shown.string() + ": " +
                                          util::describe_open_error(err));
}

}  // namespace

void copy_file_contents(const FileAt& from, const FileAt& to, mode_t mode, const SourceState* expected) {
  if (!copy_bytes(from, to, mode, expected)) {
    if (errno == EEXIST) {
      ::unlinkat(to.dir, to.name.c_str(), 0);
      if (copy_bytes(from, to, mode, expected)) return;
    }
    if (errno == kSourceChanged) throw SourceChanged(from.shown);
    throw Error(ExitCode::check_failed, "cannot copy " + from.shown.string() + " to " + to.shown.string() + ": " +
                                            util::describe_open_error(errno));
  }
}

Linker::Linker(LinkMode preferred, unsigned umask) : preferred_(preferred), umask_(umask), mode_(preferred) {}

Linker::Linker(LinkMode preferred) : Linker(preferred, util::process_umask()) {}

bool Linker::try_mode(LinkMode m, const FileAt& from, const FileAt& to, mode_t file_mode, const SourceState* expected,
                      int& err) {
  bool ok = false;
  for (int attempt = 0; attempt < 2; ++attempt) {
    switch (m) {
      case LinkMode::clone: ok = clone_file(from, to, file_mode, expected); break;
      case LinkMode::hardlink:
        ok = hard_link(from, to, file_mode, expected);
        // The cache file's mode is not this run's: this file is copied, the mode stays hardlink for the rest.
        if (!ok && errno == kModeDiffers) ok = copy_bytes(from, to, file_mode, expected);
        break;
      case LinkMode::copy: ok = copy_bytes(from, to, file_mode, expected); break;
    }
    if (ok || errno != EEXIST) break;
    ::unlinkat(to.dir, to.name.c_str(), 0);  // replace what a previous install left
  }
  err = ok ? 0 : errno;
  return ok;
}

void Linker::link(const fs::path& from, const fs::path& to, bool executable) {
  Fd from_dir = parent_of(from), to_dir = parent_of(to);
  const FileAt source{from_dir.get(), from.filename().string(), from}, target{to_dir.get(), to.filename().string(), to};
  if (!from_dir || !to_dir) cannot_place(source, target, errno);
  link(source, target, executable);
}

void Linker::link(const FileAt& from, const FileAt& to, bool executable, const SourceState* expected) {
  const mode_t file_mode = installed_file_mode(executable, umask_);
  int err = 0;
  if (!settled_.load(std::memory_order_acquire)) {
    std::unique_lock lock(mutex_);
    if (!settled_.load(std::memory_order_relaxed)) {
      // Settle the mode on the first file, falling back once.
      int first_err = 0;
      for (LinkMode candidate = preferred_;; candidate = static_cast<LinkMode>(static_cast<int>(candidate) + 1)) {
        if (try_mode(candidate, from, to, file_mode, expected, err)) {
          if (candidate != preferred_)
            warning_ = std::string("link mode ") + link_mode_name(preferred_) + " is not possible from " +
                       from.shown.parent_path().string() + " to " + to.shown.parent_path().string() + " (" +
                       std::strerror(first_err) + "); using " + link_mode_name(candidate) + " for every file";
          mode_ = candidate;
          settled_.store(true, std::memory_order_release);
          return;
        }
        if (!first_err) first_err = err;
        if (candidate == LinkMode::copy) break;
        // The source is missing, no regular file or not as unpacked: no mode will help.
        if (err == ENOENT || err == util::kNotRegularFile || err == ELOOP || err == kSourceChanged) break;
      }
      cannot_place(from, to, err);
    }
  }
  const LinkMode m = mode_;
  if (try_mode(m, from, to, file_mode, expected, err)) return;
  // One file that cannot be linked (e.g. too many links) is copied instead.
  if (m != LinkMode::copy && err != ENOENT && err != util::kNotRegularFile && err != ELOOP && err != kSourceChanged &&
      try_mode(LinkMode::copy, from, to, file_mode, expected, err))
    return;
  cannot_place(from, to, err);
}

std::string Linker::warning() const {
  std::lock_guard lock(mutex_);
  return warning_;
}

}  // namespace provkit::wheels
