#include "digest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io.hpp"

namespace provkit::download {

namespace {
constexpr std::size_t kReadBuffer = std::size_t{4} * 1024 * 1024;
}

void Hashes::reset(const download::FileSpec& spec) {
  sha256 = util::Hasher(util::DigestKind::sha256);
  git.reset();
  if (spec.git_oid) {
    git = std::make_unique<util::Hasher>(util::DigestKind::sha1);
    std::string header = "blob " + std::to_string(spec.size);
    git->update(header.data(), header.size() + 1);  // with the terminating NUL
  }
}

void Hashes::update(const char* d, std::size_t n) {
  sha256.update(d, n);
  if (git) git->update(d, n);
}

std::uint64_t hash_fd_prefix(int fd, std::uint64_t limit, Hashes& h, const std::filesystem::path& path) {
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<char[]> buf(new char[kReadBuffer]);
  std::uint64_t done = 0;
  while (done < limit) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kReadBuffer, limit - done));
    ssize_t n = ::read(fd, buf.get(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_error(path, "read error");
    if (n == 0) break;
    h.update(buf.get(), static_cast<std::size_t>(n));
    done += static_cast<std::uint64_t>(n);
  }
  return done;
}

Check check_hashes(Hashes& h, const download::FileSpec& spec) {
  Check c;
  c.sha256 = h.sha256.hex_digest();
  if (h.git) c.git_oid = h.git->hex_digest();
  if (spec.sha256 && *spec.sha256 != c.sha256) {
    c.mismatch = download::Mismatch::sha256;
    c.message = "sha256 mismatch: expected " + *spec.sha256 + ", got " + c.sha256;
  } else if (spec.git_oid && *spec.git_oid != c.git_oid) {
    c.mismatch = download::Mismatch::git_oid;
    c.message = "git blob id mismatch: expected " + *spec.git_oid + ", got " + c.git_oid + " (sha256 " + c.sha256 + ")";
  }
  return c;
}

}  // namespace provkit::download
