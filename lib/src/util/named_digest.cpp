#include "provkit/util/named_digest.hpp"

#include <openssl/evp.h>

namespace provkit::util {

struct NamedDigest::Impl {
  EVP_MD_CTX* ctx = nullptr;
  ~Impl() {
    if (ctx) EVP_MD_CTX_free(ctx);
  }
};

namespace {
const EVP_MD* evp_named(std::string_view name) {
  if (name == "sha256") return EVP_sha256();
  if (name == "sha384") return EVP_sha384();
  if (name == "sha512") return EVP_sha512();
  if (name == "sha3_256") return EVP_sha3_256();
  if (name == "sha3_384") return EVP_sha3_384();
  if (name == "sha3_512") return EVP_sha3_512();
  if (name == "blake2b") return EVP_blake2b512();
  if (name == "blake2s") return EVP_blake2s256();
  return nullptr;
}
}  // namespace

std::optional<NamedDigest> NamedDigest::named(std::string_view hashlib_name) {
  const EVP_MD* md = evp_named(hashlib_name);
  if (!md) return std::nullopt;
  NamedDigest d;
  d.impl_ = std::make_unique<Impl>();
  d.impl_->ctx = EVP_MD_CTX_new();
  if (!d.impl_->ctx || EVP_DigestInit_ex(d.impl_->ctx, md, nullptr) != 1) return std::nullopt;
  d.name_ = std::string(hashlib_name);
  return d;
}

NamedDigest::~NamedDigest() = default;
NamedDigest::NamedDigest(NamedDigest&&) noexcept = default;
NamedDigest& NamedDigest::operator=(NamedDigest&&) noexcept = default;

void NamedDigest::update(const void* data, std::size_t size) { EVP_DigestUpdate(impl_->ctx, data, size); }

std::string NamedDigest::raw_digest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

}  // namespace provkit::util
