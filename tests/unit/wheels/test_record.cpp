#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>

#include "provkit/error.hpp"
#include "provkit/wheels/record.hpp"

using namespace provkit::wheels;

TEST_CASE("RECORD reads and writes with Python csv quoting", "[envbuild]") {
  std::string text =
      "pkg/__init__.py,sha256=abc,12\r\n\"pkg/a,b.py\",sha256=def,3\n\"pkg/q\"\"uote.py\",,\npkg-1.dist-info/"
      "RECORD,,\n";
  auto rows = parse_record(text, "RECORD");
  REQUIRE(rows.size() == 4);
  CHECK(rows[1].path == "pkg/a,b.py");
  CHECK(rows[2].path == "pkg/q\"uote.py");
  CHECK(rows[3].hash.empty());
  auto out = format_record(rows);
  CHECK(out.find("\"pkg/a,b.py\",sha256=def,3\n") != std::string::npos);
  CHECK(out.find("\"pkg/q\"\"uote.py\",,\n") != std::string::npos);
  CHECK(parse_record(out, "x").size() == 4);
  CHECK_THROWS_WITH(parse_record("a,b\n", "R"), Catch::Contains("R:1"));
  CHECK_THROWS_WITH(parse_record("ok,,\n\"open,,\n", "R"), Catch::Contains("R:2"));
}

TEST_CASE("record hashes are urlsafe base64 without padding", "[envbuild]") {
  // sha256 of the empty string.
  std::string raw;
  const char* hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  for (int i = 0; i < 64; i += 2) raw += static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16));
  CHECK(record_hash(raw) == "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

TEST_CASE("metadata_header reads a METADATA header, up to the blank line that ends the headers", "[envbuild]") {
  std::string md = "Metadata-Version: 2.1\r\nName:  demo-pkg\r\nVersion:\t1.0\r\n\r\nName: in the body\n";
  CHECK(metadata_header(md, "Name") == "demo-pkg");
  CHECK(metadata_header(md, "Version") == "1.0");
  CHECK(metadata_header(md, "Summary").empty());
  CHECK(metadata_header("\nName: late\n", "Name").empty());
}

TEST_CASE("every RECORD hash algorithm the wheel spec allows is computed; weak and unknown ones are refused",
          "[envbuild]") {
  // Expected values: base64.urlsafe_b64encode(hashlib.new(name, b"hello\n").digest()).rstrip(b"=") (the
  // others are util::NamedDigest's test).
  const std::pair<const char*, const char*> expected[] = {
      {"sha512", "58IrmUxZ2c8rSOVJseJGZmNgRZMNPafBrLKZ0cO3-TH5Sq5B7dosKyB6NuEPi8uNRSI-VIePWzFufOO2vAGWKQ"},
      {"blake2s", "OWmzkmZUBllmtvjZpleJsPdtVuHiq2fdlPqncJWRh8o"},
  };
  for (const char* allowed : {"sha256", "sha384", "sha3_256", "sha3_384", "sha3_512", "blake2b"})
    CHECK(record_hash_algorithm(std::string(allowed) + "=AAAA").allowed);
  for (const auto& [name, value] : expected) {
    INFO(name);
    const std::string field = std::string(name) + "=" + value;
    const auto algorithm = record_hash_algorithm(field);
    REQUIRE(algorithm.allowed);
    CHECK(algorithm.name == name);
    CHECK(algorithm.refusal.empty());
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    REQUIRE(::write(fileno(f), "hello\n", 6) == 6);
    REQUIRE(::lseek(fileno(f), 0, SEEK_SET) == 0);
    CHECK(record_hash_of_fd(fileno(f), "hello", algorithm.name) == field);
    std::fclose(f);
  }
  for (const char* weak : {"md5", "sha1", "sha224", "sha3_224"}) {
    const auto algorithm = record_hash_algorithm(std::string(weak) + "=AAAA");
    CHECK_FALSE(algorithm.allowed);
    CHECK(algorithm.name == weak);
    CHECK_THAT(algorithm.refusal, Catch::Contains("too weak"));
  }
  for (const char* unknown : {"shake_128=AAAA", "SHA256=AAAA", "crc32=AAAA", "=AAAA", "sha256"}) {
    INFO(unknown);
    const auto algorithm = record_hash_algorithm(unknown);
    CHECK_FALSE(algorithm.allowed);
    CHECK_FALSE(algorithm.refusal.empty());
  }
}
