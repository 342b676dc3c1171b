#include "provkit/util/text.hpp"

#include <utility>

namespace provkit::util {

namespace {

const char* kHex = "0123456789abcdef";

// The length of the valid UTF-8 sequence at s[i], or 0 when the byte there does not start one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](std::size_t k) { return k < s.size() && (b(k) & 0xc0) == 0x80; };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xe0 && b(i + 1) < 0xa0) return 0;   // overlong
    if (c == 0xed && b(i + 1) >= 0xa0) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xf0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xf4 && b(i + 1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void hex_byte(std::string& out, const char* prefix, unsigned char c) {
  out += prefix;
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

// Unicode's format characters (general category Cf, Unicode 17): invisible, and the bidi controls among
// them reorder what follows on the screen (U+202E shows "gguf.exe" for "exe.fugg"). printable() escapes
// them as it escapes controls; docs/reliability.md names the set.
constexpr std::pair<long, long> kFormatRanges[] = {
    {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},   {0x070f, 0x070f},
    {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},   {0x200b, 0x200f},   {0x202a, 0x202e},
    {0x2060, 0x2064},   {0x2066, 0x206f},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
    {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f},
};

// A code point printable() writes as \xNN bytes although it is valid UTF-8: C1 controls, the line and
// paragraph separators, and the format characters.
bool escaped_code_point(long cp) {
  if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029) return true;
  for (const auto& [first, last] : kFormatRanges)
    if (cp >= first && cp <= last) return true;
  return false;
}

}  // namespace

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_length(s, i);
    auto c = static_cast<unsigned char>(s[i]);
    if (n == 1 && c >= 0x20 && c != 0x7f) {
      out += s[i++];
      continue;
    }
    if (n == 1) {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : "";
      if (c != '\n' && c != '\r' && c != '\t') hex_byte(out, "\\x", c);
      ++i;
      continue;
    }
    std::size_t next = i;
    if (n && !escaped_code_point(next_code_point(s, next))) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    for (std::size_t k = 0; k < (n ? n : 1); ++k) hex_byte(out, "\\x", static_cast<unsigned char>(s[i + k]));
    i += n ? n : 1;
  }
  return out;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_length(s, i);
    auto c = static_cast<unsigned char>(s[i]);
    if (n == 0) {
      hex_byte(out, "\\udc", c);  // surrogateescape: U+DC80..U+DCFF for the bytes 0x80..0xff
      ++i;
    } else if (n > 1) {
      out.append(s, i, n);
      i += n;
    } else {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7f) hex_byte(out, "\\u00", c);
          else out += static_cast<char>(c);
      }
      ++i;
    }
  }
  return out + "\"";
}

std::string json_dump(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::string: return json_string(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        out += (first ? "" : ",") + json_string(it.key()) + ":" + json_dump(it.value());
        first = false;
      }
      return out + "}";
    }
    case nlohmann::json::value_t::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < j.size(); ++i) out += (i ? "," : "") + json_dump(j[i]);
      return out + "]";
    }
    case nlohmann::json::value_t::binary: return "null";
    default: return j.dump();  // numbers, booleans, null: nothing of theirs can be invalid
  }
}

long next_code_point(std::string_view s, std::size_t& i) {
  unsigned char c = static_cast<unsigned char>(s[i++]);
  if (c < 0x80) return c;
  int extra = c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1;
  if (extra < 0 || (extra == 3 && c > 0xf4)) return -1;
  long cp = c & (0x3f >> extra);
  for (int k = 0; k < extra; ++k) {
    if (i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) return -1;
    cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3f);
  }
  static const long min_for[] = {0, 0x80, 0x800, 0x10000};
  if (cp < min_for[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
  return cp;
}

}  // namespace provkit::util
