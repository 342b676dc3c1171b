#pragma once
// The digests a file is checked with (sha256, and the git blob id when one is
// expected), fed as bytes stream in, and their comparison with the spec.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "provkit/fetch.hpp"
#include "provkit/hash.hpp"

namespace provkit::download {

struct Hashes {
  Hasher sha256{DigestKind::sha256};
  std::unique_ptr<Hasher> git;  // only when a git blob id is expected

  void reset(const fetch::FileSpec& spec);
  void update(const char* d, std::size_t n);
};

// Feeds the first `limit` bytes of a file into `h`; returns how many were read.
std::uint64_t hash_file_prefix(const std::filesystem::path& path, std::uint64_t limit, Hashes& h);

struct Check {
  std::string sha256, git_oid;
  fetch::Mismatch mismatch = fetch::Mismatch::none;
  std::string message;  // when mismatching: one sentence
  bool ok() const { return mismatch == fetch::Mismatch::none; }
};

// Finalises the hashes and compares them with the spec.
Check check_hashes(Hashes& h, const fetch::FileSpec& spec);

}  // namespace provkit::download
