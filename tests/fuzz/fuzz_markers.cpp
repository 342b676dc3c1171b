// libFuzzer target: PEP 508 markers (provkit::pyspec::Marker), as read from
// requirement lines and pylock.toml. Any input either parses or is refused
// with provkit::Error (SyntaxRefusal::invalid_marker); a parsed marker evaluates in all three contexts
// to a bool or that refusal (an undefined comparison), never anything else.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pyspec/markers.hpp"
#include "support/marker_env.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace provkit::pyspec;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto& env = provkit::test::linux_cpython311();
  static const MarkerSets sets{{"cli", "cpu"}, {"dev"}};
  Marker m;
  try {
    m = Marker::parse(text);
  } catch (const provkit::Error& e) {
    if (!e.is(SyntaxRefusal::invalid_marker)) std::abort();
    return 0;
  }
  for (auto context : {MarkerContext::metadata, MarkerContext::requirement, MarkerContext::lock_file}) {
    try {
      (void)m.evaluate(env, context, &sets);
    } catch (const provkit::Error& e) {
      if (!e.is(SyntaxRefusal::invalid_marker)) std::abort();
    }
  }
  return 0;
}
