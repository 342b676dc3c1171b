// libFuzzer target: a pylock.toml (provkit::pyspec::parse_pylock: the depth
// pre-check, toml++, the whole-file validation), then the entries selected for
// one interpreter with an extra and a group. Any input either parses or is
// refused with provkit::Error (exit 2, or 1 where the lock does not admit the
// interpreter); a selected entry has a name and a version, and a wheel with a
// 64-hex sha256 and a wheel file name.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "provkit/error.hpp"
#include "provkit/pyspec/lock.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/util/hash.hpp"
#include "support/marker_env.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace provkit::pyspec;
  std::string text(reinterpret_cast<const char*>(data), size);
  const auto& env = provkit::test::linux_cpython311();
  Lock lock;
  try {
    lock = parse_pylock(text, "pylock.toml");
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();
    return 0;
  }
  std::vector<LockSelection> selections(2);
  if (!lock.extras.empty()) selections[1].extras.push_back(lock.extras.front());
  if (!lock.dependency_groups.empty()) selections[1].groups.push_back(lock.dependency_groups.front());
  for (auto& selection : selections) {
    try {
      for (auto& e : applicable_entries(lock, env, selection)) {
        if (e.name.empty() || e.version.empty() || e.wheels.empty()) std::abort();
        for (auto& w : e.wheels)
          if (!provkit::util::is_hex(w.sha256, 64) || !parse_wheel_name(w.filename)) std::abort();
      }
    } catch (const provkit::Error& e) {
      if (e.code() != provkit::ExitCode::usage && e.code() != provkit::ExitCode::check_failed) std::abort();
    }
  }
  return 0;
}
