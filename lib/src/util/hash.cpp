#include "provkit/util/hash.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::util {

// The context is freed with the Impl that owns it, so a move assignment (which replaces the Impl) frees the
// replaced one: freed in ~Hasher instead, every Hasher assigned over another leaked an EVP_MD_CTX (LSan).
struct Hasher::Impl {
  EVP_MD_CTX* ctx = nullptr;
  const EVP_MD* md = nullptr;
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (ctx) EVP_MD_CTX_free(ctx);
  }
};

Hasher::Hasher(DigestKind kind) : impl_(std::make_unique<Impl>()), kind_(kind) {
  impl_->md = kind == DigestKind::sha256 ? EVP_sha256() : EVP_sha1();
  impl_->ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(impl_->ctx, impl_->md, nullptr);
}

Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

void Hasher::update(const void* data, std::size_t size) { EVP_DigestUpdate(impl_->ctx, data, size); }

std::string Hasher::raw_digest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, out, &len);
  EVP_DigestInit_ex(impl_->ctx, impl_->md, nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Hasher::hex_digest() { return to_hex(raw_digest()); }

std::string to_hex(std::string_view raw) {
  static const char digits[] = "0123456789abcdef";
  std::string out(raw.size() * 2, '0');
  for (std::size_t i = 0; i < raw.size(); ++i) {
    auto b = static_cast<unsigned char>(raw[i]);
    out[2 * i] = digits[b >> 4];
    out[2 * i + 1] = digits[b & 15];
  }
  return out;
}

bool is_hex(std::string_view s, std::size_t length) {
  if (s.size() != length) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string base64url_nopad(std::string_view raw) {
  static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < raw.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(raw[i]) << 16) | (static_cast<unsigned char>(raw[i + 1]) << 8) |
                 static_cast<unsigned char>(raw[i + 2]);
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (i < raw.size()) {
    unsigned v = static_cast<unsigned char>(raw[i]) << 16;
    if (i + 1 < raw.size()) v |= static_cast<unsigned char>(raw[i + 1]) << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    if (i + 1 < raw.size()) out += table[(v >> 6) & 63];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Hasher h(DigestKind::sha256);
  h.update(data);
  return h.hex_digest();
}

std::string git_blob_id(std::string_view content) {
  Hasher h(DigestKind::sha1);
  std::string header = "blob " + std::to_string(content.size());
  h.update(header.data(), header.size() + 1);  // includes the NUL
  h.update(content);
  return h.hex_digest();
}

namespace {
// Reads a file sequentially in large blocks, handing each block to `sink`.
template <typename Sink>
std::uint64_t read_file_blocks(const std::filesystem::path& path, Sink&& sink) {
  // Regular files only: a FIFO or /dev/zero named as a wheel or archive must never block or read forever.
  Fd fd = open_regular(path);
  if (!fd) {
    const int err = errno;
    throw Error(file_refusal(err), path.string() + ": cannot open: " + describe_open_error(err));
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buf(1 << 20);
  return util::read_blocks(fd.get(), buf, sink, path.string());
}
}  // namespace

std::string sha256_file(const std::filesystem::path& path) {
  Hasher h(DigestKind::sha256);
  read_file_blocks(path, [&](const char* p, std::size_t n) { h.update(p, n); });
  return h.hex_digest();
}

FileDigests digest_file(const std::filesystem::path& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(file_refusal(ec.value()), path.string() + ": " + ec.message());
  Hasher sha256(DigestKind::sha256), sha1(DigestKind::sha1);
  std::string header = "blob " + std::to_string(size);
  sha1.update(header.data(), header.size() + 1);
  auto total = read_file_blocks(path, [&](const char* p, std::size_t n) {
    sha256.update(p, n);
    sha1.update(p, n);
  });
  if (total != size) throw Error(FileRefusal::io_error, path.string() + ": changed while being read");
  return {sha256.hex_digest(), sha1.hex_digest(), total};
}

}  // namespace provkit::util
