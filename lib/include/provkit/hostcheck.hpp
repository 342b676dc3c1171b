#pragma once
// Host gates a deploy script wants before starting an engine: free disk,
// a free port, a file with the expected content; and the SIZE syntax they use.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace provkit::hostcheck {

namespace fs = std::filesystem;

// "500", "24G", "24GiB", "1.5T", "80GB": K/M/G/T/P alone or with "i"/"iB" are
// binary (1024-based, like nvidia-smi's MiB); with "B" ("GB") decimal.
// Throws provkit::Error(usage) naming the text when it is not a size.
std::uint64_t parse_size(std::string_view text);
// 26843545600 -> "25.0 GiB".
std::string format_size(std::uint64_t bytes);

// Bytes available to an unprivileged user on the file system holding `path`
// (the nearest existing ancestor when `path` does not exist yet).
// nullopt when it cannot be read; `why` says why.
std::optional<std::uint64_t> disk_free(const fs::path& path, std::string& why);

// Whether a TCP server could bind `port` on all IPv4 addresses now
// (SO_REUSEADDR, as servers set it, so TIME_WAIT leftovers do not count).
// `why` holds the error when it could not (EADDRINUSE, EACCES, ...).
bool port_free(int port, std::string& why);

// "PATH=VALUE" split at the last '='; the value is empty when there is none.
std::pair<std::string, std::string> split_assignment(std::string_view text);

}  // namespace provkit::hostcheck
