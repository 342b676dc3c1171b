#include "provkit/util/interrupt.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/log.hpp"

namespace provkit::util {

namespace {
// The temporaries alive in this process. Commits and the signal path's removal take the lock, so a rename
// into place never meets a removal half way.
std::timed_mutex registry_mu;
std::vector<const Temporary*>& registry() {
  static std::vector<const Temporary*> r;
  return r;
}

[[noreturn]] void throw_errno(const fs::path& path, const std::string& what) {
  const int err = errno;
  throw Error(file_refusal(err), path.string() + ": " + what + ": " + describe_open_error(err));
}

// A directory and everything in it, below `dir_path` (Root::remove_all: a link is removed, never followed).
bool remove_tree(const fs::path& dir_path, const std::string& name) noexcept {
  try {
    return Root(dir_path).remove_all(dir_path / name);
  } catch (...) {
    return false;
  }
}

int flock_retrying(int fd, int op) {
  int rc;
  while ((rc = ::flock(fd, op)) != 0 && errno == EINTR) {}
  return rc;
}

// Whether `name` is a temporary temp_path_beside(target, tag) made, for any PID and counter: the
// ".<tag>-<pid>-<n>" it ends with, put back on `target` as that function does (a long name is shortened),
// gives `name` again.
bool is_temporary_name(std::string_view name, const std::string& target, std::string_view tag) {
  auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  auto counter = name.rfind('-');
  if (counter == std::string_view::npos || counter == 0 || !digits(name.substr(counter + 1))) return false;
  auto pid = name.rfind('-', counter - 1);
  if (pid == std::string_view::npos || !digits(name.substr(pid + 1, counter - pid - 1))) return false;
  std::string suffix = "." + std::string(tag);
  if (pid < suffix.size() || name.substr(pid - suffix.size(), suffix.size()) != suffix) return false;
  suffix += name.substr(pid);
  return path_with_suffix(target, suffix).string() == name;
}
}  // namespace

Temporary::Temporary(int dir, const fs::path& dir_path, const std::string& target_name, std::string_view tag, Kind kind)
    : dir_(::fcntl(dir, F_DUPFD_CLOEXEC, 0)), dir_path_(dir_path), kind_(kind) {
  if (!dir_) throw_errno(dir_path, "cannot open directory");
  // Made and registered under the registry's lock: a signal's handler never finds the name made and
  // not yet registered (it waits for it, then removes it).
  std::lock_guard registering(registry_mu);
  // A sweeper in another run may take the lock between our create and our flock, find it free and remove
  // the name: then the inode we hold has no name left, and we make another.
  for (int attempt = 0;; ++attempt) {
    name_ = temp_path_beside(target_name, tag).string();
    if (kind == Kind::file) {
      fd_.reset(::openat(dir_.get(), name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    } else {
      if (::mkdirat(dir_.get(), name_.c_str(), 0755) != 0) throw_errno(path(), "cannot create directory");
      fd_.reset(::openat(dir_.get(), name_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    if (!fd_) throw_errno(path(), "cannot create");
    lock_.reset(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));  // the same open file: the same flock
    if (!lock_ || flock_retrying(lock_.get(), LOCK_EX) != 0) throw_errno(path(), "cannot lock");
    struct stat st;
    if (::fstat(fd_.get(), &st) != 0) throw_errno(path(), "cannot stat");
    if (st.st_nlink > 0 || attempt >= 8) break;
  }
  registry().push_back(this);
  registered_ = true;
}

Temporary::~Temporary() {
  if (registered_) {
    std::lock_guard lock(registry_mu);
    auto& r = registry();
    r.erase(std::remove(r.begin(), r.end(), this), r.end());
    remove();
  }
}

void Temporary::remove() const noexcept {
  if (kind_ == Kind::file) {
    ::unlinkat(dir_.get(), name_.c_str(), 0);
    return;
  }
  // On a signal another thread may still be writing into the tree by its path: the tree is first renamed
  // (still a temporary's name, "...-N0", so a run that finds it left sweeps it), so those writes fail rather
  // than refill it, then removed, again while a write that was under way lands in it.
  std::string name = name_;
  if (::renameat(dir_.get(), name_.c_str(), dir_.get(), (name_ + "0").c_str()) == 0) name = name_ + "0";
  for (int attempt = 0; attempt < 5; ++attempt) {
    remove_tree(dir_path_, name);
    struct stat st {};
    if (::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void Temporary::commit(const std::function<void()>& move) {
  std::lock_guard lock(registry_mu);
  move();
  auto& r = registry();
  r.erase(std::remove(r.begin(), r.end(), this), r.end());
  registered_ = false;
}

void remove_temporaries_now(std::chrono::milliseconds budget) noexcept {
  if (!registry_mu.try_lock_for(budget)) return;  // a rename under way that does not end: leave them
  for (const Temporary* t : registry()) t->remove();
  // Kept locked: nothing is renamed into place after the removal; the caller exits.
}

Swept sweep_temporaries(int dir, const fs::path& dir_path, const std::string& target_name, std::string_view tag) {
  Swept swept;
  Fd listing(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing) return swept;
  DIR* d = ::fdopendir(listing.get());
  if (!d) return swept;
  listing.release();  // closedir closes it
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d))
    if (is_temporary_name(e->d_name, target_name, tag)) names.emplace_back(e->d_name);
  ::closedir(d);
  for (const auto& name : names) {
    struct stat st, now;
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    bool is_dir = S_ISDIR(st.st_mode);
    if (!is_dir && !S_ISREG(st.st_mode)) continue;
    Fd f(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0)));
    if (!f || flock_retrying(f.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its run is alive (or it went)
    // Still the file that was locked: never a name another run made since.
    if (::fstat(f.get(), &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) continue;
    log::debug("fs", [&] { return "remove " + name + ", the temporary of a run that is gone"; });
    if (is_dir ? !remove_tree(dir_path, name) : ::unlinkat(dir, name.c_str(), 0) != 0) continue;
    ++swept.count;
    if (!is_dir) swept.bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return swept;
}

bool write_within(int fd, std::string_view data, std::chrono::milliseconds budget) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + budget;
  while (!data.empty()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left < 0) return false;
    pollfd p{fd, POLLOUT, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL))) return false;
    ssize_t n = ::write(fd, data.data(), std::min<std::size_t>(data.size(), PIPE_BUF));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace provkit::util
