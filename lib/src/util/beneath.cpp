#include "provkit/util/beneath.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/text.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/util/log.hpp"

namespace provkit::util {

namespace {

// The components of a relative path, "." and empty ones dropped; false for
// an absolute path or a "..".
bool components(const fs::path& relative, std::vector<std::string>& out) {
  if (relative.is_absolute()) return false;
  for (const auto& part : relative) {
    std::string s = part.string();
    if (s.empty() || s == ".") continue;
    if (s == "..") return false;
    out.push_back(std::move(s));
  }
  return true;
}

// Once openat2 answered ENOSYS or EPERM, it is not asked again.
std::atomic<bool> openat2_missing{false};

bool walk_forced() { return env_value(EnvVar::provkit_fs_resolve) == "walk"; }

// ELOOP when `name` in `dir` is a link (O_NOFOLLOW | O_DIRECTORY on a link says ENOTDIR).
int link_or(int dir, const std::string& name, int err) {
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) return ELOOP;
  return err;
}

Fd walk(int root_fd, const std::vector<std::string>& parts, int flags, mode_t mode) {
  if (parts.empty()) return Fd(::openat(root_fd, ".", flags | O_CLOEXEC, mode));
  Fd held;
  int dir = root_fd;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    int next = ::openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int e = link_or(dir, parts[i], errno);
      errno = e;
      return Fd();
    }
    held.reset(next);
    dir = next;
  }
  int fd = ::openat(dir, parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    int e = errno == ENOTDIR ? link_or(dir, parts.back(), errno) : errno;
    errno = e;
  }
  return Fd(fd);
}

}  // namespace

Fd open_beneath(int root_fd, const fs::path& relative, int flags, mode_t mode, Resolver resolver) {
  std::vector<std::string> parts;
  if (!components(relative, parts)) {
    errno = EXDEV;
    return Fd();
  }
  if (resolver == Resolver::automatic) resolver = walk_forced() || openat2_missing ? Resolver::walk : Resolver::openat2;
  if (resolver == Resolver::openat2) {
    std::string joined;
    for (const auto& p : parts) joined += (joined.empty() ? "" : "/") + p;
    if (joined.empty()) joined = ".";
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    long fd = ::syscall(SYS_openat2, root_fd, joined.c_str(), &how, sizeof how);
    if (fd >= 0) return Fd(static_cast<int>(fd));
    // ENOTDIR is also what a link gives as the last component of an O_DIRECTORY | O_NOFOLLOW open: the walk
    // says which (ELOOP for a link), and opens nothing that openat2 would not.
    if (errno == ENOTDIR) return walk(root_fd, parts, flags, mode);
    if (errno != ENOSYS && errno != EPERM) return Fd();
    openat2_missing = true;  // a seccomp filter, or a kernel before 5.6
  }
  return walk(root_fd, parts, flags, mode);
}

namespace {
// `fd` if it names a regular file (errno EISDIR or kNotRegularFile otherwise), blocking again unless the
// caller asked for O_NONBLOCK: the open was non-blocking so that a FIFO could not hang it.
Fd only_regular(Fd fd, int flags) {
  if (!fd) return fd;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Fd();
  if (!S_ISREG(st.st_mode)) {
    errno = S_ISDIR(st.st_mode) ? EISDIR : kNotRegularFile;
    return Fd();
  }
  if (!(flags & O_NONBLOCK)) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}
}  // namespace

Fd make_dirs_beneath(int root_fd, const fs::path& relative) {
  std::vector<std::string> parts;
  if (!components(relative, parts)) {
    errno = EXDEV;
    return Fd();
  }
  Fd held;
  int dir = root_fd;
  for (const auto& part : parts) {
    int next = ::openat(dir, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT) {
      if (::mkdirat(dir, part.c_str(), 0755) != 0 && errno != EEXIST) return Fd();
      next = ::openat(dir, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
      int e = link_or(dir, part, errno);
      errno = e;
      return Fd();
    }
    held.reset(next);
    dir = next;
  }
  // A descriptor that fsync takes (O_PATH ones do not).
  int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) fd = ::openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  return Fd(fd);
}

std::string describe_open_error(int err) {
  switch (err) {
    case ELOOP: return "a symbolic link is in the way (links are not followed below the cache, env or local dir)";
    case kNotRegularFile: return "not a regular file (a FIFO, device or socket)";
    case EXDEV: return "the path leaves its root";
    case ENXIO: return "nothing reads from it (a FIFO without a reader), or no such device";
    default: return std::strerror(err);
  }
}

Fd open_regular_beneath(int root_fd, const fs::path& relative, int flags, mode_t mode, Resolver resolver) {
  return only_regular(open_beneath(root_fd, relative, flags | O_NONBLOCK, mode, resolver), flags);
}
Fd open_regular(const fs::path& path, int flags) {
  return only_regular(Fd(::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC)), flags);
}

Fd open_output_stream(const fs::path& path) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// ---- Root -------------------------------------------------------------------------

namespace {
[[noreturn]] void fail(const fs::path& p, const std::string& what, int err) {
  throw Error(file_refusal(err), p.string() + ": " + what + ": " + describe_open_error(err));
}

bool writes(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0; }

// The trace of each file opened for writing below a root, and what came of it.
void trace_open(const fs::path& dir, const fs::path& rel, int flags, const Fd& fd) {
  if (!writes(flags)) return;
  int err = errno;
  log::debug("fs",
             [&] { return "open for writing " + (dir / rel).string() + (fd ? "" : ": " + describe_open_error(err)); });
  errno = err;
}
}  // namespace

int Root::fd(bool create) const {
  std::lock_guard lock(mu_);
  if (!fd_) {
    if (create) {
      std::error_code ec;
      fs::create_directories(dir_, ec);
    }
    fd_.reset(::open(dir_.empty() ? "." : dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  return fd_.get();
}

fs::path Root::relative(const fs::path& p) const {
  if (dir_.empty()) throw Error(FileRefusal::outside_root, p.string() + ": no root to open it below");
  fs::path rel;
  // Both spelt from the same working directory (the layouts build paths as root / ...): no getcwd, which
  // a walk of thousands of files would otherwise pay twice per file.
  if (p.is_absolute() == dir_.is_absolute()) rel = p.lexically_normal().lexically_relative(dir_.lexically_normal());
  if (rel.empty() || *rel.begin() == "..") {
    auto base = fs::absolute(dir_).lexically_normal();
    auto full = (p.is_absolute() ? p : fs::absolute(p)).lexically_normal();
    rel = full.lexically_relative(base);
  }
  if (rel.empty() || *rel.begin() == "..")
    throw Error(FileRefusal::outside_root, p.string() + ": lies outside " + dir_.string());
  return rel;
}

Fd Root::open(const fs::path& p, int flags, mode_t mode) const {
  int root = fd((flags & O_CREAT) != 0);
  if (root < 0) return Fd();
  fs::path rel = relative(p);
  Fd f = open_beneath(root, rel, flags, mode);
  trace_open(dir_, rel, flags, f);
  return f;
}

Fd Root::open_regular(const fs::path& p, int flags, mode_t mode) const {
  int root = fd((flags & O_CREAT) != 0);
  if (root < 0) return Fd();
  fs::path rel = relative(p);
  Fd f = open_regular_beneath(root, rel, flags, mode);
  trace_open(dir_, rel, flags, f);
  return f;
}

Fd Root::make_dirs(const fs::path& p) const {
  int root = fd(true);
  if (root < 0) fail(dir_, "cannot open", errno);
  Fd dir = make_dirs_beneath(root, relative(p));
  if (!dir) fail(p, "cannot create directory", errno);
  return dir;
}

Fd Root::parent(const fs::path& p, bool create) const {
  fs::path rel = relative(p).parent_path();
  if (create) return make_dirs(dir_ / rel);
  int root = fd();
  if (root < 0) fail(dir_, "cannot open", errno);
  Fd dir = open_beneath(root, rel, O_RDONLY | O_DIRECTORY);
  if (!dir && errno == EACCES) dir = open_beneath(root, rel, O_PATH | O_DIRECTORY);
  if (!dir) fail(p.parent_path(), "cannot open directory", errno);
  return dir;
}

std::string Root::read(const fs::path& p, std::size_t max_bytes) const {
  Fd f = open_regular(p, O_RDONLY);
  if (!f) fail(p, "cannot open", errno);
  return read_bounded(f.get(), max_bytes, p.string());
}

std::string Root::read_if_present(const fs::path& p, std::size_t max_bytes) const {
  Fd f = open_regular(p, O_RDONLY);
  if (!f && errno == ENOENT) return {};
  if (!f) fail(p, "cannot open", errno);
  return read_bounded(f.get(), max_bytes, p.string());
}

void Root::write_atomic(const fs::path& p, std::string_view content, fs::perms mode, Durability durability) const {
  Fd dir = parent(p, true);
  std::string name = p.filename().string();
  std::string tmp = temp_path_beside(name).string();
  log::debug("fs", [&] { return "write " + p.string() + " (through " + tmp + ", renamed over it)"; });
  Fd out(::openat(dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  static_cast<mode_t>(mode)));
  if (!out) fail(p.parent_path() / tmp, "cannot create", errno);
  bool durable = durability == Durability::power_loss;
  int err = write_all(out.get(), content);
  if (err == 0 && durable && ::fsync(out.get()) != 0) err = errno;
  if (int e = out.close(); err == 0) err = e;
  if (err == 0 && ::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    fail(p, "write error", err);
  }
  if (durable) ::fsync(dir.get());
}

void Root::rename(const fs::path& from, const fs::path& to, bool durable) const {
  Fd from_dir = parent(from, false);
  Fd to_dir = parent(to, true);
  log::debug("fs", [&] { return "rename " + from.string() + " -> " + to.string(); });
  if (::renameat(from_dir.get(), from.filename().c_str(), to_dir.get(), to.filename().c_str()) != 0)
    fail(to, "cannot rename " + from.string() + " to it", errno);
  if (durable) ::fsync(to_dir.get());
}

namespace {
bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// A new name for the file `fd` is open on, in `dir`: linkat through /proc/self/fd (the descriptor's own
// inode, whatever its old name names now). 0, or errno (ENOENT: no /proc).
int link_descriptor(int fd, int dir, const char* name) {
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, proc.c_str(), dir, name, AT_SYMLINK_FOLLOW) == 0) return 0;
  return errno;
}
}  // namespace

void Root::publish(int file_fd, const fs::path& from, const fs::path& to, bool durable) const {
  struct stat held;
  if (::fstat(file_fd, &held) != 0) fail(from, "cannot stat", errno);
  Fd from_dir = parent(from, false);
  Fd to_dir = parent(to, true);
  log::debug("fs", [&] { return "publish " + from.string() + " -> " + to.string() + " (the descriptor's own file)"; });
  // Not there yet (the usual case): the descriptor's inode linked at the final name, so what appears there is
  // what was hashed, with no window at all. There already (a copy being replaced): linked at a fresh temporary
  // name beside it, then renamed over it.
  std::string target = to.filename().string();
  int err = link_descriptor(file_fd, to_dir.get(), target.c_str());
  if (err == EEXIST) {
    std::string tmp = temp_path_beside(target).string();
    err = link_descriptor(file_fd, to_dir.get(), tmp.c_str());
    if (err == 0) {
      struct stat named;
      // The one window left: between the link and the rename, someone with write access to the directory
      // could rename other bytes onto the temporary name; the check shrinks it to the two calls.
      if (::fstatat(to_dir.get(), tmp.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0) err = errno;
      else if (!same_file(named, held)) err = ESTALE;
      else if (::renameat(to_dir.get(), tmp.c_str(), to_dir.get(), target.c_str()) != 0) err = errno;
      if (err != 0) {
        ::unlinkat(to_dir.get(), tmp.c_str(), 0);
        fail(to, "cannot publish " + from.string() + " at it", err);
      }
    }
  }
  if (err == ENOENT || err == EPERM || err == EXDEV || err == EMLINK || err == ENOTSUP) {
    // No /proc, or a file system without hard links: the name is checked, then renamed (the window is the
    // two calls).
    struct stat named;
    if (::fstatat(from_dir.get(), from.filename().c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 || !same_file(named, held))
      fail(from, "replaced before it could be published", ESTALE);
    if (::renameat(from_dir.get(), from.filename().c_str(), to_dir.get(), target.c_str()) != 0)
      fail(to, "cannot rename " + from.string() + " to it", errno);
    if (durable) ::fsync(to_dir.get());
    return;
  }
  if (err != 0) fail(to, "cannot publish " + from.string() + " at it", err);
  // The old name goes only if it is still the descriptor's file (anything renamed onto it stays, unpublished).
  struct stat named;
  if (::fstatat(from_dir.get(), from.filename().c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 && same_file(named, held))
    ::unlinkat(from_dir.get(), from.filename().c_str(), 0);
  if (durable) ::fsync(to_dir.get());
}

bool Root::remove(const fs::path& p) const {
  int root = fd();
  if (root < 0) return false;
  Fd dir = open_beneath(root, relative(p).parent_path(), O_PATH | O_DIRECTORY);
  if (!dir) {
    if (errno == ENOENT) return false;
    fail(p.parent_path(), "cannot open directory", errno);
  }
  if (::unlinkat(dir.get(), p.filename().c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  fail(p, "cannot remove", errno);
}

bool Root::remove_empty_directory(const fs::path& p) const {
  int root = fd();
  if (root < 0) return false;
  Fd dir = open_beneath(root, relative(p).parent_path(), O_PATH | O_DIRECTORY);
  if (!dir) return false;
  return ::unlinkat(dir.get(), p.filename().c_str(), AT_REMOVEDIR) == 0;
}

namespace {
// Empties the directory `dir` (a descriptor, which it closes): each entry unlinked, a directory emptied
// through its own O_NOFOLLOW descriptor first, then removed. 0, or the first errno met.
int empty_directory(Fd dir, int depth) {
  if (depth > 512) return ELOOP;
  Fd listing(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing) return errno;
  DIR* d = ::fdopendir(listing.get());
  if (!d) return errno;
  listing.release();  // closedir closes it
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  int first = 0;
  for (const auto& name : names) {
    if (::unlinkat(dir.get(), name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR && errno != EPERM) {
      first = first ? first : errno;
      continue;
    }
    Fd sub(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    int err = sub ? empty_directory(std::move(sub), depth + 1) : errno;
    if (err == 0 && ::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR) != 0) err = errno;
    if (err != 0 && err != ENOENT) first = first ? first : err;
  }
  return first;
}
}  // namespace

bool Root::remove_all(const fs::path& p) const {
  int root = fd();
  if (root < 0) return false;
  fs::path rel = relative(p);
  Fd dir = open_beneath(root, rel.parent_path(), O_PATH | O_DIRECTORY);
  if (!dir) {
    if (errno == ENOENT) return false;
    fail(p.parent_path(), "cannot open directory", errno);
  }
  std::string name = rel.filename().string();
  log::debug("fs", [&] { return "remove " + (dir_ / rel).string() + " and everything below it"; });
  if (::unlinkat(dir.get(), name.c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  if (errno != EISDIR && errno != EPERM) fail(p, "cannot remove", errno);
  Fd sub(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  int err = sub ? empty_directory(std::move(sub), 0) : errno;
  if (err == 0 && ::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR) != 0) err = errno;
  if (err == ENOENT) return false;
  if (err != 0) fail(p, "cannot remove", err);
  return true;
}

bool Root::stat(const fs::path& p, struct stat& st) const {
  int root = fd();
  if (root < 0) return false;
  Fd dir = open_beneath(root, relative(p).parent_path(), O_PATH | O_DIRECTORY);
  if (!dir) return false;
  return ::fstatat(dir.get(), p.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool DirectoryWalk::stat(const fs::path& relative, struct stat& st) {
  if (!top_) return false;
  const fs::path parent = relative.parent_path();
  int dir = top_.get();
  if (!parent.empty()) {
    // Files come grouped by directory (RECORD order), so the last directory is nearly always the one.
    if (!last_fd_ || parent.native() != last_dir_) {
      last_fd_ = open_beneath(top_.get(), parent, O_PATH | O_DIRECTORY);
      last_dir_ = parent.native();
      if (!last_fd_) return false;
    }
    dir = last_fd_.get();
  }
  return ::fstatat(dir, relative.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

fs::path common_directory(std::initializer_list<fs::path> paths) {
  fs::path common;
  bool first = true;
  for (const fs::path& p : paths) {
    if (p.empty()) continue;
    fs::path dir = fs::absolute(p).lexically_normal().parent_path();
    if (first) {
      common = dir;
      first = false;
      continue;
    }
    fs::path shared;
    for (auto a = common.begin(), b = dir.begin(); a != common.end() && b != dir.end() && *a == *b; ++a, ++b)
      shared /= *a;
    common = shared;
  }
  return common;
}

// ---- the path rule ------------------------------------------------------------

bool is_safe_relative_path(std::string_view path, Trailing trailing) {
  if (trailing == Trailing::slash_allowed && path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path.empty() || path.size() > 4096 || path.front() == '/') return false;
  for (std::size_t i = 0; i < path.size();) {
    long cp = next_code_point(path, i);
    if (cp < 0x20 || cp == '\\' || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff)
      return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    std::string_view seg = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

bool is_within(const fs::path& p, const fs::path& dir) {
  fs::path base = dir.lexically_normal();
  fs::path full = (p.is_absolute() ? p : dir / p).lexically_normal();
  auto rel = full.lexically_relative(base);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace provkit::util
