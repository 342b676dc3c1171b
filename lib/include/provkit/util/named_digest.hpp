#pragma once
// Digests chosen by the name a file format gives them (a wheel RECORD's "sha512=..."), by Python hashlib's
// names, streamed through OpenSSL EVP as hash.hpp's Hasher streams sha256. Only the algorithms listed here:
// a format decides which of them it accepts (wheels/record).
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace provkit::util {

class NamedDigest {
 public:
  // sha256, sha384, sha512, sha3_256, sha3_384, sha3_512, blake2b (BLAKE2b-512, hashlib's default size),
  // blake2s (BLAKE2s-256); nullopt for any other name.
  static std::optional<NamedDigest> named(std::string_view hashlib_name);
  ~NamedDigest();
  NamedDigest(NamedDigest&&) noexcept;
  NamedDigest& operator=(NamedDigest&&) noexcept;
  NamedDigest(const NamedDigest&) = delete;
  NamedDigest& operator=(const NamedDigest&) = delete;

  const std::string& name() const { return name_; }
  void update(const void* data, std::size_t size);
  std::string raw_digest();  // finalises

 private:
  NamedDigest() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string name_;
};

}  // namespace provkit::util
