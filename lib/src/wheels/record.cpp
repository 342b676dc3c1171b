#include "provkit/wheels/record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/hash.hpp"

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

std::string record_hash(std::string_view raw_sha256) { return "sha256=" + util::base64url_nopad(raw_sha256); }

std::string record_hash_of_fd(int fd, const std::string& what) {
  util::Hasher h;
  static thread_local char buf[1 << 17];
  util::read_blocks(
      fd, buf, [&](const char* p, std::size_t n) { h.update(p, n); }, what);
  return record_hash(h.raw_digest());
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
