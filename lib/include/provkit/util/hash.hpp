#pragma once
// Streaming digests (OpenSSL EVP) and the ids the Hub and git use.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace provkit::util {

enum class DigestKind { sha256, sha1 };

// Incremental hash: feed bytes as they stream in, read the hex digest once.
class Hasher {
 public:
  explicit Hasher(DigestKind kind = DigestKind::sha256);
  ~Hasher();
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  std::string hex_digest();  // finalises; the hasher is then reset
  std::string raw_digest();  // finalises; raw bytes

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  DigestKind kind_;
};

std::string sha256_hex(std::string_view data);

// sha256 of a whole file, read sequentially with a large buffer.
std::string sha256_file(const std::filesystem::path& path);

// git blob id: sha1("blob <size>\0" + content), the `oid` of a non-LFS tree entry.
std::string git_blob_id(std::string_view content);

// Both sha256 and the git blob id of a file in one read.
struct FileDigests {
  std::string sha256;
  std::string git_oid;
  std::uint64_t size = 0;
};
FileDigests digest_file(const std::filesystem::path& path);

std::string to_hex(std::string_view raw);
bool is_hex(std::string_view s, std::size_t length);
// urlsafe base64 without padding, as wheel RECORD files write hashes.
std::string base64url_nopad(std::string_view raw);

}  // namespace provkit::util
