// Verification of files on disk (no network) and the verified stamps that
// let a rerun with everything in place read nothing (see fetch.hpp).
#include <sys/stat.h>

#include <optional>
#include <sstream>

#include "provkit/download/digest.hpp"
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

Verification verify_file(const fs::path& path, const FileSpec& spec) {
  Verification v;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
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
  download::hash_file_prefix(path, v.size, h);
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

namespace {
// What a verified stamp remembers of a file: if any of it changed, the file
// may have too.
std::optional<std::string> file_identity(const fs::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  auto ns = [](const timespec& t) { return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec); };
  return "file " + std::to_string(st.st_size) + " " + ns(st.st_mtim) + " " + ns(st.st_ctim) + " " +
         std::to_string(st.st_ino) + " " + std::to_string(st.st_dev) + "\n";
}
std::string stamp_text(const std::string& identity, const std::string& sha256, const std::string& git_oid) {
  return "provkit-verified 1\n" + identity + "sha256 " + sha256 + "\ngit_oid " + git_oid + "\n";
}
}  // namespace

void record_verified(const fs::path& path, const Verification& v, const fs::path& stamp) {
  if (stamp.empty() || v.state != FileState::ok) return;
  auto identity = file_identity(path);
  if (!identity) return;
  // Losing a stamp costs one re-hash, so no fsync.
  util::write_file_atomic(stamp, stamp_text(*identity, v.sha256, v.git_oid), fs::perms(0644), util::Durability::process_crash);
}

Verification verify_file_stamped(const fs::path& path, const FileSpec& spec, const fs::path& stamp) {
  std::optional<std::string> identity;
  std::string text;
  if (!stamp.empty() && (identity = file_identity(path))) {
    try {
      text = util::read_file(stamp);
    } catch (const Error&) {  // no stamp (yet)
    }
  }
  // "provkit-verified 1", the identity line, "sha256 <hex>", "git_oid <hex or nothing>".
  std::istringstream lines(text);
  std::string magic, ident, sha, git;
  if (identity && std::getline(lines, magic) && std::getline(lines, ident) && std::getline(lines, sha) &&
      std::getline(lines, git) && magic == "provkit-verified 1" && ident + "\n" == *identity &&
      sha.starts_with("sha256 ") && git.starts_with("git_oid ")) {
    sha = sha.substr(7);
    git = git.substr(8);
    bool vouches = sha.size() == 64 && (!spec.sha256 || *spec.sha256 == sha) && (!spec.git_oid || *spec.git_oid == git) &&
                   ident.starts_with("file " + std::to_string(spec.size) + " ");
    if (vouches) {
      Verification v;
      v.state = FileState::ok;
      v.size = spec.size;
      v.sha256 = sha;
      if (spec.git_oid) v.git_oid = git;
      v.from_stamp = true;
      return v;
    }
  }
  Verification v = verify_file(path, spec);
  record_verified(path, v, stamp);
  return v;
}

}  // namespace provkit::download
