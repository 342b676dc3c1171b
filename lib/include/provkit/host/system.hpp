#pragma once
// Host gates a deploy script wants before starting an engine: free disk,
// a free port, a file with the expected content.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace provkit::host {

namespace fs = std::filesystem;

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

}  // namespace provkit::host
