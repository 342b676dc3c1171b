#pragma once
// A Python project's name and version as values: the name normalised once (PEP 503), the version parsed
// once (PEP 440), so that everything that matches a lock entry, a wheel and an installed distribution
// compares them one way.
#include <optional>
#include <string>
#include <string_view>

#include "provkit/pyspec/pep440.hpp"
#include "provkit/pyspec/wheel_name.hpp"

namespace provkit::pyspec {

// A project name, normalised once (PEP 503) and compared as that; the spelling as written kept for messages.
class PackageName {
 public:
  PackageName() = default;
  explicit PackageName(std::string_view as_written) : written_(as_written), normal_(normalize_name(as_written)) {}
  const std::string& normalized() const { return normal_; }
  const std::string& as_written() const { return written_; }
  bool operator==(const PackageName& o) const { return normal_ == o.normal_; }
  bool operator<(const PackageName& o) const { return normal_ < o.normal_; }

 private:
  std::string written_, normal_;
};

// A version parsed once: compared as a PEP 440 value when both sides parse (1.0 == 1.0.0), else after
// same_version's light normalisation (an installed METADATA may hold anything).
class PackageVersion {
 public:
  PackageVersion() = default;
  explicit PackageVersion(std::string_view text) : text_(text), parsed_(parse_version(text)) {}
  const std::string& str() const { return text_; }
  const std::optional<Version>& pep440() const { return parsed_; }
  bool operator==(const PackageVersion& o) const;
  bool operator!=(const PackageVersion& o) const { return !(*this == o); }

 private:
  std::string text_;
  std::optional<Version> parsed_;
};

// PEP 508's distribution name (letters and digits, '.', '-' and '_' between them), as packaging's
// canonicalize_name(validate=True) accepts it.
bool is_distribution_name(std::string_view name);
// One compressed tag triple of a wheel file name or a WHEEL Tag line, "py2.py3-none-any": three parts,
// each one or more [A-Za-z0-9_] runs joined by '.'.
bool is_wheel_tag(std::string_view tag);

// The file name of a wheel made from parts read from outside (an installed METADATA's Name and Version, its
// WHEEL's tags): each part checked against its grammar (is_distribution_name, PEP 440, is_wheel_tag) and the
// name built from the checked parts only, {dist_info_name}-{normalised version}-{tag}.whl, so that it is
// one file name (util::is_safe_file_name) however the parts were spelt. Throws Error(ExitCode::usage)
// naming the part refused: the one rule for a wheel named from metadata.
std::string make_wheel_filename(std::string_view name, std::string_view version, std::string_view tag);

}  // namespace provkit::pyspec
