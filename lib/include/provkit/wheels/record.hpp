#pragma once
// The RECORD file of an installed or packed wheel: CSV rows path,hash,size
// with Python csv module quoting; hash "sha256=<urlsafe base64, no padding>".
// And the headers of its METADATA, read by installing and by listing what is installed.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::wheels {

struct RecordRow {
  std::string path;
  std::string hash;  // "sha256=..." or empty (RECORD itself, .pyc)
  std::string size;  // decimal or empty
};

// Throws input_error naming `file` and the line on malformed CSV.
std::vector<RecordRow> parse_record(std::string_view text, const std::string& file);
// One row per line, fields quoted only when they need it (csv.QUOTE_MINIMAL).
std::string format_record(const std::vector<RecordRow>& rows);

// "sha256=" + util::base64url_nopad(raw digest).
std::string record_hash(std::string_view raw_sha256);
// "<algorithm>=" + util::base64url_nopad of an open file's bytes, read from where it stands, with
// `algorithm` (one record_hash_algorithm allows); `what` names the file in errors.
std::string record_hash_of_fd(int fd, const std::string& what, std::string_view algorithm = "sha256");

// The algorithm of a RECORD row's hash field ("ALGO=VALUE"), by the wheel spec's rule ("sha256 or better;
// md5 and sha1 are not permitted"): hashlib's guaranteed algorithms of 256 bits or more (sha256, sha384,
// sha512, sha3_256, sha3_384, sha3_512, blake2b, blake2s), each computed with OpenSSL (util::NamedDigest).
// md5, sha1, sha224 and sha3_224 are too weak and anything else is unknown: a row naming one is a problem
// its reader reports (verify, install), never a row it skips. The one judgement of every RECORD hash read.
struct RecordHashAlgorithm {
  std::string name;      // as the row writes it, before '=' (the whole field without one)
  bool allowed = false;  // record_hash_of_fd computes it
  std::string refusal;   // when not allowed: why ("md5 is too weak ...", "unknown hash algorithm ...")
};
RecordHashAlgorithm record_hash_algorithm(std::string_view field);

// A header of a METADATA file ("Name", "Version"); empty when absent.
std::string metadata_header(const std::string& metadata, const std::string& key);

}  // namespace provkit::wheels
