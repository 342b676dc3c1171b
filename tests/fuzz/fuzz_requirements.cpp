// libFuzzer target: a hash-checking requirements file
// (provkit::pyspec::parse_requirements), then the entries selected for one
// interpreter. Any input either parses or is refused with provkit::Error; a
// parsed entry has a name, a version and at least one 64-hex sha256.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "provkit/error.hpp"
#include "provkit/pyspec/lock.hpp"
#include "provkit/util/hash.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace provkit::pyspec;
  std::string text(reinterpret_cast<const char*>(data), size);
  static const std::map<std::string, std::string> env = {{"implementation_name", "cpython"},
                                                         {"os_name", "posix"},
                                                         {"platform_machine", "x86_64"},
                                                         {"platform_system", "Linux"},
                                                         {"python_full_version", "3.11.2"},
                                                         {"python_version", "3.11"},
                                                         {"sys_platform", "linux"}};
  Lock lock;
  try {
    lock = parse_requirements(text, "requirements.txt");
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();
    return 0;
  }
  for (auto& e : lock.entries) {
    if (e.name.empty() || e.version.empty() || e.sha256.empty()) std::abort();
    for (auto& h : e.sha256)
      if (!provkit::util::is_hex(h, 64)) std::abort();
  }
  try {
    (void)applicable_entries(lock, env);
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage && e.code() != provkit::ExitCode::check_failed) std::abort();
  }
  return 0;
}
