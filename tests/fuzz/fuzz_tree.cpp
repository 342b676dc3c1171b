// libFuzzer target: one page of a Hub tree listing (provkit::hub::parse_tree_page).
// Any input either parses or is refused with provkit::Error (a malformed
// upstream answer, exit 3); anything else escaping is a bug. What parses must
// be safe to use as names: a file's etag is exactly 40 or 64 lower-case hex
// digits, and the names derived from an entry's path (partial, lock, stamp,
// temporary: util::path_with_suffix) fit NAME_MAX.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "provkit/error.hpp"
#include "provkit/hub/client.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto entries = provkit::hub::parse_tree_page(text);
    for (const auto& e : entries) {
      // What the fetch code reads from every entry must be well-defined.
      (void)e.content_size();
      if (e.is_file()) {
        std::string etag = e.etag();
        if (!provkit::util::is_hex(etag, e.lfs ? 64 : 40)) std::abort();
      }
      if (e.path.empty() || e.path.find('\0') != std::string::npos) continue;
      for (std::string_view suffix : {".stamp", ".provkit-partial.ranges", ".lock"}) {
        auto derived = provkit::util::path_with_suffix(e.path, suffix).filename().string();
        if (derived.size() > 255 && std::filesystem::path(e.path).filename().string().size() <= 255) std::abort();
      }
    }
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::network) std::abort();
  }
  return 0;
}
