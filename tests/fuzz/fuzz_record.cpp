// libFuzzer target: a wheel's RECORD (provkit::wheels::parse_record), as read from
// every wheel and every installed distribution. Any input either parses or is
// refused with provkit::Error(usage) naming the line; a parsed RECORD must
// survive format_record and parse back to the same rows.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "provkit/error.hpp"
#include "provkit/wheels/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<provkit::wheels::RecordRow> rows;
  try {
    rows = provkit::wheels::parse_record(text, "RECORD");
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();
    return 0;
  }
  for (auto& r : rows)
    if (r.path.empty()) std::abort();
  auto again = provkit::wheels::parse_record(provkit::wheels::format_record(rows), "RECORD (formatted)");
  if (again.size() != rows.size()) std::abort();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (again[i].path != rows[i].path || again[i].hash != rows[i].hash || again[i].size != rows[i].size) std::abort();
  return 0;
}
