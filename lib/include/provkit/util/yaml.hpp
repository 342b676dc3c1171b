#pragma once
// Reading YAML input files (manifests, envcheck profiles) the same way: one
// document only, errors as provkit::input_error (FILE:LINE, exit 2).
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

namespace provkit::util {

// The one YAML document in `text`. Invalid YAML, or anything after the first
// document (a second one after "---", which yaml-cpp's Load would silently
// drop), is an input_error naming `file` and the line. Empty text gives a
// null node.
YAML::Node load_single_yaml_document(std::string_view text, const std::string& file);

// The 1-based line of a node (0 when yaml-cpp has no mark for it).
int yaml_line(const YAML::Node& node);

}  // namespace provkit::util
