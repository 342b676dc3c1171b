// util/named_digest: the digests a format names, against Python's hashlib.
#include <catch2/catch.hpp>
#include <string>

#include "provkit/util/hash.hpp"
#include "provkit/util/named_digest.hpp"

using namespace provkit;

TEST_CASE("NamedDigest: hashlib's names, hashlib's values", "[util][hash]") {
  // base64.urlsafe_b64encode(hashlib.new(name, b"hello\n").digest()).rstrip(b"=")
  const std::pair<const char*, const char*> expected[] = {
      {"sha256", "WJG1tSLV3whtD_CxEPvZ0hu0_HFjrzTQgoai6Eb2vgM"},
      {"sha384", "HQ8oTv4-3qS5yjvVFPoTSxfq42HMx6Hu_v-AG5vWYE4B8h9r8knvAwWZ8MIY8rqM"},
      {"sha512", "58IrmUxZ2c8rSOVJseJGZmNgRZMNPafBrLKZ0cO3-TH5Sq5B7dosKyB6NuEPi8uNRSI-VIePWzFufOO2vAGWKQ"},
      {"sha3_256", "sxTihJPq6dq1esTwxtiHvdu-uBDpANgYOVrOVY6WUW0"},
      {"sha3_384", "RZsoRP6m46k3qDl8DWnAbZxslD4VXaRUxjj1QkKW6ZT9AznqI0Nn_wFEk7Ua250u"},
      {"sha3_512", "rHZrpiMwHgrWPEjLL8Rp0QFF9lyfHyj-dhx4w4btKVof2hsF4oA1TmIHV9ioPgWkX2ZDjdc0J4ZowcJ6xvJxUA"},
      {"blake2b", "9gzkguXMEinznXExMXGo2fTKOofQZr9LIF7_tSgZKnXxTzJx4sGpDh3lPydbTUeT7vL14x6pDSzinS5IHDZDXw"},
      {"blake2s", "OWmzkmZUBllmtvjZpleJsPdtVuHiq2fdlPqncJWRh8o"},
  };
  for (const auto& [name, value] : expected) {
    INFO(name);
    auto digest = util::NamedDigest::named(name);
    REQUIRE(digest);
    CHECK(digest->name() == name);
    digest->update("hel", 3);
    digest->update("lo\n", 3);
    CHECK(util::base64url_nopad(digest->raw_digest()) == value);
  }
  for (const char* other : {"md5", "sha1", "SHA256", "shake_128", "", "sha512_256"})
    CHECK_FALSE(util::NamedDigest::named(other));
}
