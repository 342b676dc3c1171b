#include "provkit/pyspec/package.hpp"

#include <algorithm>
#include <cctype>

#include "provkit/error.hpp"
#include "provkit/util/file_name.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::pyspec {

bool PackageVersion::operator==(const PackageVersion& o) const {
  if (parsed_ && o.parsed_) return compare(*parsed_, *o.parsed_) == 0;
  return same_version(text_, o.text_);
}

namespace {
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
// One part of a tag triple: [A-Za-z0-9_] runs joined by '.'.
bool is_tag_part(std::string_view part) {
  if (part.empty() || part.front() == '.' || part.back() == '.') return false;
  for (std::size_t i = 0; i < part.size(); ++i) {
    const char c = part[i];
    if (c == '.' ? part[i - 1] == '.' : !(is_alnum(c) || c == '_')) return false;
  }
  return true;
}
// A value from outside, quoted for a sentence and cut short (the tools escape it for printing).
std::string cut_short(std::string_view text) {
  return "'" + std::string(text.substr(0, 100)) + (text.size() > 100 ? "..." : "") + "'";
}
}  // namespace

bool is_distribution_name(std::string_view name) {
  if (name.empty() || !is_alnum(name.front()) || !is_alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return is_alnum(c) || c == '.' || c == '-' || c == '_'; });
}

bool is_wheel_tag(std::string_view tag) {
  const auto parts = util::split(tag, '-');
  return parts.size() == 3 && std::all_of(parts.begin(), parts.end(), [](const auto& p) { return is_tag_part(p); });
}

std::string make_wheel_filename(std::string_view name, std::string_view version, std::string_view tag) {
  if (!is_distribution_name(name))
    throw Error(ExitCode::usage, "Name " + cut_short(name) +
                                     " is not a distribution name (PEP 508: letters, digits and '.', '-', '_' "
                                     "between them)");
  const auto parsed = parse_version(version);
  if (!parsed) throw Error(ExitCode::usage, "Version " + cut_short(version) + " is not a PEP 440 version");
  if (!is_wheel_tag(tag))
    throw Error(ExitCode::usage, "tag " + cut_short(tag) + " is not a wheel tag (PYTHON-ABI-PLATFORM)");
  std::string filename = util::concat({dist_info_name(name), "-", parsed->str(), "-", tag, ".whl"});
  // The grammars admit no '/', no control character and no "..": the length is what is left to bound.
  if (!util::is_safe_file_name(filename))
    throw Error(ExitCode::usage, "the wheel name " + cut_short(filename) + " is longer than a file name may be");
  return filename;
}

}  // namespace provkit::pyspec
