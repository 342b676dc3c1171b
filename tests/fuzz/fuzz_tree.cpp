// libFuzzer target: one page of a Hub tree listing (provkit::hub::parse_tree_page).
// Any input either parses or is refused with provkit::Error (a malformed
// upstream answer, exit 3); anything else escaping is a bug.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "provkit/error.hpp"
#include "provkit/hub.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto entries = provkit::hub::parse_tree_page(text);
    for (const auto& e : entries) {
      // What the fetch code reads from every entry must be well-defined.
      (void)e.is_file();
      (void)e.content_size();
      (void)e.etag();
    }
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::network) std::abort();
  }
  return 0;
}
