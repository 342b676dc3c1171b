// libFuzzer target: the manifest parser (provkit::hub::Manifest::parse).
// Any input either parses or is refused with provkit::Error (exit 2, file and
// line, control bytes of the input escaped); anything else escaping (another
// exception type, a crash, a sanitizer report) is a bug. A manifest that
// parses must survive its own round trip: to_yaml() reads back to the same
// manifest.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "provkit/error.hpp"
#include "provkit/hub/manifest.hpp"

namespace {
bool same(const provkit::hub::Manifest& a, const provkit::hub::Manifest& b) {
  if (a.repo.id != b.repo.id || a.repo.type != b.repo.type || a.revision != b.revision) return false;
  if (a.files.size() != b.files.size() || a.assemble.size() != b.assemble.size()) return false;
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    const auto &x = a.files[i], &y = b.files[i];
    if (x.path != y.path || x.size != y.size || x.sha256 != y.sha256 || x.git_oid != y.git_oid) return false;
  }
  for (std::size_t i = 0; i < a.assemble.size(); ++i) {
    const auto &x = a.assemble[i], &y = b.assemble[i];
    if (x.output != y.output || x.parts != y.parts || x.sha256 != y.sha256 || x.size != y.size) return false;
  }
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  provkit::hub::Manifest m;
  try {
    m = provkit::hub::Manifest::parse(text, "fuzz.manifest");
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();  // a bad manifest is always exit 2
    // Input is quoted escaped: one line, no terminal controls, never cut short by a NUL.
    for (unsigned char c : std::string_view(e.what()))
      if (c < 0x20 || c == 0x7f) std::abort();
    return 0;
  }
  for (const auto& f : m.files)
    if (!provkit::hub::is_safe_relative_path(f.path)) std::abort();
  provkit::hub::Manifest again = provkit::hub::Manifest::parse(m.to_yaml(), "round-trip.manifest");
  if (!same(m, again)) std::abort();
  return 0;
}
