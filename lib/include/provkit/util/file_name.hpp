#pragma once
// The path rule (beneath.hpp's is_safe_relative_path) for a name that must be one component: a file a tool
// names from outside data (a wheel packed by capture from METADATA, a launcher named by entry_points.txt).
#include <string_view>

namespace provkit::util {

// is_safe_relative_path, no '/', at most NAME_MAX (255) bytes: one file name, never a path.
bool is_safe_file_name(std::string_view name);

}  // namespace provkit::util
