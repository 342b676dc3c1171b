#pragma once
// PEP 508 environment markers ("python_version >= '3.8' and sys_platform == 'linux'")
// evaluated against an interpreter's marker values.
#include <map>
#include <string>
#include <string_view>

namespace provkit::py {

// Throws std::invalid_argument with a short reason when the marker is malformed;
// callers add file and line. `extra` evaluates as "" (locks are flat).
bool evaluate_marker(std::string_view marker, const std::map<std::string, std::string>& env);

}  // namespace provkit::py
