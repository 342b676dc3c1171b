// libFuzzer target: the envcheck profile parser (provkit::host::parse_profile).
// Any input either parses or is refused with provkit::Error (exit 2, file and
// line); anything else escaping is a bug, and so is a refusal whose message
// holds a control byte (input is quoted escaped, so a message is one line and
// a NUL never cuts it short).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "provkit/error.hpp"
#include "provkit/host/envcheck.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  provkit::host::Request r;
  try {
    provkit::host::parse_profile(text, "fuzz.yaml", r);
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();
    std::string msg = e.what();
    if (!msg.starts_with("fuzz.yaml")) std::abort();
    for (unsigned char c : msg)
      if (c < 0x20 || c == 0x7f) std::abort();
  }
  return 0;
}
