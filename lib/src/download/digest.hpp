#pragma once
// The digests a file is checked with (sha256, and the git blob id when one is
// expected), fed as bytes stream in, and their comparison with the spec.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "provkit/download/downloader.hpp"
#include "provkit/util/hash.hpp"

namespace provkit::download {

struct Hashes {
  util::Hasher sha256{util::DigestKind::sha256};
  std::unique_ptr<util::Hasher> git;  // only when a git blob id is expected

  void reset(const download::FileSpec& spec);
  void update(const char* d, std::size_t n);
};

// Feeds the first `limit` bytes of an open file (from its offset) into `h`;
// returns how many were read. `path` names it in errors.
std::uint64_t hash_fd_prefix(int fd, std::uint64_t limit, Hashes& h, const std::filesystem::path& path);

struct Check {
  std::string sha256, git_oid;
  download::Mismatch mismatch = download::Mismatch::none;
  std::string message;  // when mismatching: one sentence
  bool ok() const { return mismatch == download::Mismatch::none; }
};

// Finalises the hashes and compares them with the spec.
Check check_hashes(Hashes& h, const download::FileSpec& spec);

}  // namespace provkit::download
