#pragma once
// Raw file-descriptor I/O (later util/fd).
#include <cstddef>
#include <string_view>

namespace provkit::util {

// Writes all `size` bytes to `fd`, resuming after short writes and EINTR.
// 0 when done, else the errno of the write that failed.
int write_all(int fd, const void* data, std::size_t size);
inline int write_all(int fd, std::string_view data) { return write_all(fd, data.data(), data.size()); }

}  // namespace provkit::util
