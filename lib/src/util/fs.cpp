#include "provkit/util/fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/log.hpp"

namespace provkit::util {

namespace {
[[noreturn]] void throw_errno(const fs::path& path, const std::string& what) {
  const int err = errno;
  throw Error(file_refusal(err), path.string() + ": " + what + ": " + describe_open_error(err));
}
}  // namespace

std::string read_file(const fs::path& path, std::size_t max_bytes) {
  Fd fd = open_regular(path);
  if (!fd) throw_errno(path, "cannot open");
  return read_bounded(fd.get(), max_bytes, path.string());
}

namespace {
std::string read_at(const fs::path& path, std::uint64_t at, std::size_t n) {
  Fd fd = open_regular(path);
  if (!fd) throw_errno(path, "cannot open");
  return util::read_at(fd.get(), at, n, path.string());
}
}  // namespace

std::string read_file_head(const fs::path& path, std::size_t max_bytes) { return read_at(path, 0, max_bytes); }

std::string read_file_range(const fs::path& path, std::uint64_t at, std::size_t n) {
  std::string out = read_at(path, at, n);
  if (out.size() != n)
    throw Error(FileRefusal::short_file, path.string() + ": " + std::to_string(n) + " bytes at " + std::to_string(at) +
                                             " asked for, the file ends after " + std::to_string(out.size()));
  return out;
}

fs::path path_with_suffix(const fs::path& path, std::string_view suffix) {
  constexpr std::size_t kNameMax = 255;  // NAME_MAX of Linux file systems
  std::string name = path.filename().string();
  if (name.size() + suffix.size() <= kNameMax) return path.string() + std::string(suffix);
  // FNV-1a, not sha256: fsutil needs only libc (cc-shim links it statically).
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  std::string tag = "~" + std::string(hex);
  std::size_t keep = kNameMax > suffix.size() + tag.size() ? kNameMax - suffix.size() - tag.size() : 0;
  keep = std::min(keep, name.size());
  // Never cut a UTF-8 sequence in two.
  while (keep > 0 && keep < name.size() && (static_cast<unsigned char>(name[keep]) & 0xc0) == 0x80) --keep;
  return path.parent_path() / (name.substr(0, keep) + tag + std::string(suffix));
}

fs::path temp_path_beside(const fs::path& target, std::string_view tag) {
  static std::atomic<unsigned> counter{0};
  return path_with_suffix(target,
                          "." + std::string(tag) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
}

void fsync_path(const fs::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd) ::fsync(fd.get());
}

void rename_durable(const fs::path& from, const fs::path& to) {
  log::debug("fs", [&] { return "rename " + from.string() + " -> " + to.string(); });
  if (::rename(from.c_str(), to.c_str()) != 0) throw_errno(to, "cannot rename " + from.string() + " to it");
  fsync_path(to.parent_path().empty() ? fs::path(".") : to.parent_path());
}

void write_file_atomic(const fs::path& target, std::string_view content, fs::perms mode, Durability durability) {
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw Error(file_refusal(ec.value()),
                  target.parent_path().string() + ": cannot create directory: " + ec.message());
  }
  auto tmp = temp_path_beside(target);
  log::debug("fs", [&] {
    return "write " + target.string() + " (through " + tmp.filename().string() + ", renamed over it)";
  });
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode)));
  if (!fd) throw_errno(tmp, "cannot create");
  bool durable = durability == Durability::power_loss;
  int err = util::write_all(fd.get(), content);
  if (err == 0 && durable && ::fsync(fd.get()) != 0) err = errno;
  if (int e = fd.close(); err == 0) err = e;
  if (err == 0 && ::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    errno = err;
    throw_errno(target, "write error");
  }
  if (durable) fsync_path(target.parent_path().empty() ? fs::path(".") : target.parent_path());
}

fs::path user_cache_dir() {
  auto writable = [](const fs::path& p) {
    std::error_code ec;
    fs::create_directories(p, ec);
    return !ec && ::access(p.c_str(), W_OK) == 0;
  };
  if (auto xdg = env_value(EnvVar::xdg_cache_home); !xdg.empty() && writable(xdg)) return xdg;
  if (auto home = env_value(EnvVar::home); !home.empty() && writable(fs::path(home) / ".cache"))
    return fs::path(home) / ".cache";
  fs::path fallback = "/tmp/provkit-" + std::to_string(::getuid());
  writable(fallback);
  return fallback;
}

unsigned process_umask() {
  try {
    const std::string status = read_file_head("/proc/self/status", std::size_t{64} * 1024);
    const auto at = status.find("\nUmask:");
    unsigned mask = 0;
    if (at != std::string::npos && std::sscanf(status.c_str() + at + 1, "Umask: %o", &mask) == 1) return mask & 0777;
  } catch (const Error&) {
    // no /proc: asked of the kernel below
  }
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return mask & 0777;
}

}  // namespace provkit::util
