#pragma once
// Wheel file names ({dist}-{version}(-{build})?-{py}-{abi}-{plat}.whl) and
// project-name normalisation (PEP 503).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::pyspec {

// "Foo.Bar_baz" -> "foo-bar-baz" (lower case, runs of -_. become one '-').
std::string normalize_name(std::string_view name);
// The form dist-info directories and wheel names use: "foo_bar_baz".
std::string dist_info_name(std::string_view name);

struct WheelName {
  std::string filename;
  std::string name;  // as written in the file name
  std::string version;
  std::string build;  // empty when absent
  std::vector<std::string> python_tags, abi_tags, platform_tags;

  // Every "py-abi-plat" triple the (possibly compressed) tag sets expand to.
  std::vector<std::string> tags() const;
};

// nullopt when `filename` is not a well-formed wheel name.
std::optional<WheelName> parse_wheel_name(std::string_view filename);

// Versions compared after light PEP 440 normalisation ("1.0.0RC1" == "1.0.0rc1",
// leading "v" dropped, "-"/"_" separators as "."), enough for lock pins.
bool same_version(std::string_view a, std::string_view b);

// PEP 440 ordering for markers and requires-python: <0, 0, >0.
int compare_versions(std::string_view a, std::string_view b);

}  // namespace provkit::pyspec
