// libFuzzer target: PEP 508 markers (provkit::pyspec::Marker), as read from
// requirement lines and pylock.toml. Any input either parses or is refused
// with std::invalid_argument; a parsed marker evaluates in all three contexts
// to a bool or std::invalid_argument (an undefined comparison), never anything else.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "provkit/pyspec/markers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace provkit::pyspec;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::map<std::string, std::string> env = {{"implementation_name", "cpython"},
                                                         {"implementation_version", "3.11.2"},
                                                         {"os_name", "posix"},
                                                         {"platform_machine", "x86_64"},
                                                         {"platform_release", "6.1.0-18-amd64"},
                                                         {"platform_system", "Linux"},
                                                         {"platform_version", "#1 SMP Debian"},
                                                         {"python_full_version", "3.11.2"},
                                                         {"platform_python_implementation", "CPython"},
                                                         {"python_version", "3.11"},
                                                         {"sys_platform", "linux"}};
  static const MarkerSets sets{{"cli", "cpu"}, {"dev"}};
  Marker m;
  try {
    m = Marker::parse(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  for (auto context : {MarkerContext::metadata, MarkerContext::requirement, MarkerContext::lock_file}) {
    try {
      (void)m.evaluate(env, context, &sets);
    } catch (const std::invalid_argument&) {}
  }
  return 0;
}
