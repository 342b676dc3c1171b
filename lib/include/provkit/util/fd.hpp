#pragma once
// Raw file-descriptor I/O (later util/fd).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace provkit::util {

// Writes all `size` bytes to `fd`, resuming after short writes and EINTR.
// 0 when done, else the errno of the write that failed.
int write_all(int fd, const void* data, std::size_t size);
inline int write_all(int fd, std::string_view data) { return write_all(fd, data.data(), data.size()); }

// Reads `fd` to its end through `buffer`, handing each block read to `sink`
// (the one loop behind every hash-a-file); returns the bytes read. Throws
// Error (check_failed) "<what>: read error: <reason>".
std::uint64_t read_blocks(int fd, std::span<char> buffer, const std::function<void(const char*, std::size_t)>& sink,
                          const std::string& what);

}  // namespace provkit::util
