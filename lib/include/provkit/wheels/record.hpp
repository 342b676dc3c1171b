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
// record_hash of an open file's bytes, read from where it stands; `what` names it in errors.
std::string record_hash_of_fd(int fd, const std::string& what);

// A header of a METADATA file ("Name", "Version"); empty when absent.
std::string metadata_header(const std::string& metadata, const std::string& key);

}  // namespace provkit::wheels
