#pragma once
// The download engine's file work: raw-fd writes, preallocation, the
// per-blob flock, and keeping rejected content aside. Failures throw
// provkit::Error (check_failed) naming the path.
#include <cstdint>
#include <filesystem>
#include <string>

#include "provkit/download/blob_lock.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::download {

struct Job;

namespace fs = std::filesystem;

// errno's sentence after `what`.
[[noreturn]] void io_error(const fs::path& path, const std::string& what);
// `still_needed`: bytes the file still needs on disk.
[[noreturn]] void no_space(const fs::path& path, std::uint64_t still_needed);

void write_all(int fd, const char* data, std::size_t n, const fs::path& path);
void pwrite_all(int fd, const char* data, std::size_t n, std::uint64_t offset, const fs::path& path,
                std::uint64_t still_needed);
// Reserves the whole file at once, so that a full disk shows at the start.
void preallocate(int fd, std::uint64_t size, const fs::path& path, std::uint64_t still_needed);
void make_parent(const fs::path& p);

// job.root, or else the nearest directory that all the job's paths lie below.
fs::path job_root(const download::Job& job);

// Moves content that failed verification out of the way, named by its
// sha256, below `root` (no link followed): "<prefix>.bad-<sha256>". A blob
// keeps one such copy at most: older ones are removed. Call with the blob's
// lock held.
fs::path keep_aside(const util::Root& root, const fs::path& from, const fs::path& prefix, const std::string& sha256);
// Removes every "<prefix>.bad-*" (once a good copy is in place).
void remove_rejected(const util::Root& root, const fs::path& prefix);

}  // namespace provkit::download
