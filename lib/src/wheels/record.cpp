#include "provkit/wheels/record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/named_digest.hpp"

namespace provkit::wheels {

std::vector<RecordRow> parse_record(std::string_view text, const std::string& file) {
  std::vector<RecordRow> rows;
  std::size_t i = 0;
  int line = 1;
  while (i < text.size()) {
    std::vector<std::string> fields;
    std::string field;
    int row_line = line;
    bool done = false;
    while (!done) {
      if (i < text.size() && text[i] == '"') {
        ++i;
        for (;;) {
          if (i >= text.size()) throw input_error(file, row_line, "unterminated quoted field");
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          field += text[i++];
        }
      }
      while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
        if (text[i] == '"') throw input_error(file, row_line, "stray quote in field");
        field += text[i++];
      }
      fields.push_back(std::move(field));
      field.clear();
      if (i >= text.size()) {
        done = true;
      } else if (text[i] == ',') {
        ++i;
      } else {
        if (text[i] == '\r') ++i;
        if (i < text.size() && text[i] == '\n') ++i;
        ++line;
        done = true;
      }
    }
    if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
    if (fields.size() != 3)
      throw input_error(file, row_line, "expected 3 fields (path,hash,size), got " + std::to_string(fields.size()));
    if (fields[0].empty()) throw input_error(file, row_line, "empty path");
    rows.push_back({std::move(fields[0]), std::move(fields[1]), std::move(fields[2])});
  }
  return rows;
}

namespace {
std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string format_record(const std::vector<RecordRow>& rows) {
  std::string out;
  for (auto& r : rows) out += quote(r.path) + "," + quote(r.hash) + "," + quote(r.size) + "\n";
  return out;
}

namespace {
// What a RECORD may name, as hashlib names it (hashlib.new(name) is what installer checks with).
constexpr std::string_view kAllowedDigests[] = {"sha256",   "sha384",   "sha512",  "sha3_256",
                                                "sha3_384", "sha3_512", "blake2b", "blake2s"};
// hashlib's guaranteed algorithms under 256 bits: the spec's "sha256 or better" leaves them out.
constexpr std::string_view kWeakDigests[] = {"md5", "sha1", "sha224", "sha3_224"};
}  // namespace

std::string record_hash(std::string_view raw_sha256) { return "sha256=" + util::base64url_nopad(raw_sha256); }

std::string record_hash_of_fd(int fd, const std::string& what, std::string_view algorithm) {
  auto digest = util::NamedDigest::named(algorithm);
  if (!digest) throw std::invalid_argument("record_hash_of_fd: no digest named " + std::string(algorithm));
  static thread_local char buf[1 << 17];
  util::read_blocks(
      fd, buf, [&](const char* p, std::size_t n) { digest->update(p, n); }, what);
  return std::string(algorithm) + "=" + util::base64url_nopad(digest->raw_digest());
}

RecordHashAlgorithm record_hash_algorithm(std::string_view field) {
  RecordHashAlgorithm out;
  const auto eq = field.find('=');
  out.name = std::string(field.substr(0, eq));
  if (eq == std::string_view::npos) {
    out.refusal = "no algorithm (a RECORD hash is ALGORITHM=VALUE)";
    return out;
  }
  for (auto allowed : kAllowedDigests)
    if (out.name == allowed) {
      out.allowed = true;
      return out;
    }
  for (auto weak : kWeakDigests)
    if (out.name == weak) {
      out.refusal = out.name + " is too weak (the wheel spec allows sha256 or stronger)";
      return out;
    }
  out.refusal = "unknown hash algorithm (sha256, sha384, sha512, sha3_256, sha3_384, sha3_512, blake2b or blake2s)";
  return out;
}

std::string metadata_header(const std::string& metadata, const std::string& key) {
  std::istringstream in(metadata);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // end of headers
    if (line.size() > key.size() + 1 && line.compare(0, key.size() + 1, key + ":") == 0) {
      auto v = line.substr(key.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "";
}

}  // namespace provkit::wheels
