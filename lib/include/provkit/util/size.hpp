#pragma once
// The SIZE syntax every provkit tool and file uses, and the one way sizes are shown.
#include <cstdint>
#include <string>
#include <string_view>

namespace provkit::util {

// "500", "24G", "24GiB", "1.5T", "80GB": K/M/G/T/P alone or with "i"/"iB" are
// binary (1024-based, like nvidia-smi's MiB); with "B" ("GB") decimal.
// Throws provkit::Error(usage) naming the text when it is not a size.
std::uint64_t parse_size(std::string_view text);
// 26843545600 -> "25.0 GiB".
std::string format_size(std::uint64_t bytes);

}  // namespace provkit::util
