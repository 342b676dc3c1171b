#pragma once
// The marker environment of CPython 3.11.2 on Linux x86_64 (Debian 12's python3), as
// packaging.markers.default_environment() gives it there: for the lock tests and the lock fuzz targets.
#include <map>
#include <string>

namespace provkit::test {

inline const std::map<std::string, std::string>& linux_cpython311() {
  static const std::map<std::string, std::string> env = {{"implementation_name", "cpython"},
                                                         {"implementation_version", "3.11.2"},
                                                         {"os_name", "posix"},
                                                         {"platform_machine", "x86_64"},
                                                         {"platform_release", "6.1.0"},
                                                         {"platform_system", "Linux"},
                                                         {"platform_version", "#1"},
                                                         {"python_full_version", "3.11.2"},
                                                         {"platform_python_implementation", "CPython"},
                                                         {"python_version", "3.11"},
                                                         {"sys_platform", "linux"}};
  return env;
}

}  // namespace provkit::test
