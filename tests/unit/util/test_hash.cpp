#include <catch2/catch.hpp>

#include "provkit/util/hash.hpp"

using namespace provkit;

TEST_CASE("sha256 known vectors", "[hash]") {
  CHECK(util::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(util::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  util::Hasher h;
  h.update("a");
  h.update("bc");
  CHECK(h.hex_digest() == util::sha256_hex("abc"));
}

// download::Hashes::reset assigns a fresh Hasher over the one it holds, once per file verified. The context of
// the replaced hasher leaked (LeakSanitizer, in the ctest "sanitize: the unit suite under ASan and UBSan",
// reports it from this case); the digests after the assignment are those of the new hasher's bytes only.
TEST_CASE("a hasher assigned over another hashes afresh and frees the replaced one", "[hash]") {
  util::Hasher h(util::DigestKind::sha1);
  h.update("bytes the replaced hasher saw");
  h = util::Hasher(util::DigestKind::sha256);
  h.update("abc");
  CHECK(h.hex_digest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  util::Hasher moved_from(util::DigestKind::sha1);
  util::Hasher target(std::move(moved_from));
  target.update("abc");
  CHECK(target.hex_digest() == "a9993e364706816aba3e25717850c26c9cd0d89d");  // sha1("abc"), FIPS 180-1
}

TEST_CASE("git blob ids match git hash-object", "[hash]") {
  // `printf '' | git hash-object --stdin` and `printf 'hello\n' | git hash-object --stdin`
  CHECK(util::git_blob_id("") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  CHECK(util::git_blob_id("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST_CASE("urlsafe base64 without padding, as RECORD writes it", "[hash]") {
  CHECK(util::base64url_nopad("") == "");
  CHECK(util::base64url_nopad("f") == "Zg");
  CHECK(util::base64url_nopad("fo") == "Zm8");
  CHECK(util::base64url_nopad("foo") == "Zm9v");
  CHECK(util::base64url_nopad("\xfb\xff") == "-_8");
}
