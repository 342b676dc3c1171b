// Verification of files on disk (no network) and the verified stamps that
// let a rerun with everything in place read nothing (see fetch.hpp).
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>

#include <optional>
#include <sstream>

#include "digest.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::download {

using download::Check;
using download::Hashes;

std::string state_name(FileState s) {
  switch (s) {
    case FileState::ok: return "OK";
    case FileState::missing: return "MISSING";
    case FileState::size_mismatch: return "SIZE MISMATCH";
    case FileState::sha256_mismatch: return "SHA256 MISMATCH";
    case FileState::git_oid_mismatch: return "GIT OID MISMATCH";
  }
  return "?";
}

namespace {
// Verifies an opened file (invalid fd: missing) through that descriptor only.
Verification verify_fd(const util::Fd& fd, const fs::path& path, const FileSpec& spec) {
  Verification v;
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    v.state = FileState::missing;
    return v;
  }
  v.size = static_cast<std::uint64_t>(st.st_size);
  if (v.size != spec.size) {
    v.state = FileState::size_mismatch;
    return v;
  }
  Hashes h;
  h.reset(spec);
  download::hash_fd_prefix(fd.get(), v.size, h, path);
  Check c = download::check_hashes(h, spec);
  v.sha256 = c.sha256;
  v.git_oid = c.git_oid;
  switch (c.mismatch) {
    case Mismatch::sha256: v.state = FileState::sha256_mismatch; break;
    case Mismatch::git_oid: v.state = FileState::git_oid_mismatch; break;
    default: v.state = FileState::ok; break;
  }
  return v;
}

// What a verified stamp holds, at most (a planted huge file is not read).
constexpr std::size_t kStampMax = std::size_t{64} * 1024;

std::string stamp_text(const std::string& identity, const std::string& sha256, const std::string& git_oid) {
  return "provkit-verified 2\n" + identity + "sha256 " + sha256 + "\ngit_oid " + git_oid + "\n";
}
}  // namespace

Verification verify_file(const fs::path& path, const FileSpec& spec) {
  // A FIFO or device where a file should be is "missing", never a read that blocks or never ends.
  return verify_fd(util::open_regular(path), path, spec);
}

Verification verify_file(const util::Root& root, const fs::path& path, const FileSpec& spec) {
  return verify_fd(root.open_regular(path, O_RDONLY), path, spec);
}

std::optional<std::string> file_identity(const fs::path& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return std::nullopt;
  std::string resolved(real);
  std::free(real);
  struct stat st;
  if (::stat(resolved.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // Not ctime: a hard link (mirror export) or a chmod changes it, not the bytes.
  return "file " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_dev) + " " +
         resolved + "\n";
}

std::string record_verified(const util::Root& root, const fs::path& path, const Verification& v,
                            const fs::path& stamp) {
  if (stamp.empty() || v.state != FileState::ok) return {};
  auto identity = file_identity(path);
  if (!identity) return {};
  try {
    // Losing a stamp costs one re-hash, so no fsync.
    root.write_atomic(stamp, stamp_text(*identity, v.sha256, v.git_oid), fs::perms(0644),
                      util::Durability::process_crash);
  } catch (const Error& e) {
    return std::string("the verified stamp was not written (the next run hashes the file again): ") + e.what();
  }
  return {};
}

Verification verify_file_stamped_only(const util::Root& root, const fs::path& path, const FileSpec& spec,
                                      const fs::path& stamp) {
  Verification none;
  std::optional<std::string> identity;
  std::string text;
  if (stamp.empty() || !(identity = file_identity(path))) return none;
  try {
    text = root.read_if_present(stamp, kStampMax);
  } catch (const Error&) {  // a link, FIFO or oversized file where the stamp should be: no stamp
    return none;
  }
  // "provkit-verified 2", the identity line, "sha256 <hex>", "git_oid <hex or nothing>".
  std::istringstream lines(text);
  std::string magic, ident, sha, git;
  if (!(std::getline(lines, magic) && std::getline(lines, ident) && std::getline(lines, sha) &&
        std::getline(lines, git) && magic == "provkit-verified 2" && ident + "\n" == *identity &&
        sha.starts_with("sha256 ") && git.starts_with("git_oid ")))
    return none;
  sha = sha.substr(7);
  git = git.substr(8);
  bool vouches = sha.size() == 64 && (!spec.sha256 || *spec.sha256 == sha) && (!spec.git_oid || *spec.git_oid == git) &&
                 ident.starts_with("file " + std::to_string(spec.size) + " ");
  if (!vouches) return none;
  Verification v;
  v.state = FileState::ok;
  v.size = spec.size;
  v.sha256 = sha;
  v.git_oid = git;
  v.from_stamp = true;
  return v;
}

Verification verify_file_stamped(const util::Root& root, const fs::path& path, const FileSpec& spec,
                                 const fs::path& stamp) {
  Verification v = verify_file_stamped_only(root, path, spec, stamp);
  if (v.from_stamp) {
    if (!spec.git_oid) v.git_oid.clear();
    return v;
  }
  v = verify_file(root, path, spec);
  v.stamp_warning = record_verified(root, path, v, stamp);
  return v;
}

}  // namespace provkit::download
