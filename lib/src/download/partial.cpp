#include "partial.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "provkit/error.hpp"
#include "provkit/util/fs.hpp"

namespace provkit::download {

namespace {
// How often a split file's sidecar is rewritten while bytes arrive (and at
// every finished range): what a kill can cost is this much transfer time.
constexpr auto kSidecarInterval = std::chrono::milliseconds(250);
constexpr std::size_t kWriteChunk = 1u << 20;
constexpr std::uint64_t kWriteBehind = 8u << 20;
constexpr std::size_t kSidecarMax = 1u << 20;
}  // namespace

void PartialFile::open(int connections, std::uint64_t min_split, download::Observer& observer) {
  std::uint64_t size = job_.spec.size;
  root_.parent(job_.partial_path, true);
  // Below the root, no link followed: a partial file planted as a link to a
  // file elsewhere is refused, never truncated and written through.
  fd_ = root_.open_regular(job_.partial_path, O_RDWR | O_CREAT, 0644);
  if (!fd_)
    throw Error(ExitCode::check_failed,
                job_.partial_path.string() + ": cannot open: " + util::describe_open_error(errno));
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) io_error(job_.partial_path, "cannot stat");
  std::uint64_t length = static_cast<std::uint64_t>(st.st_size);
  sidecar_ = util::path_with_suffix(job_.partial_path, ".ranges");

  struct stat sidecar_st;
  bool had_sidecar = root_.stat(sidecar_, sidecar_st);
  std::optional<std::vector<ranges::Range>> kept;
  if (had_sidecar) {
    try {
      // A sidecar is a few lines per range; a link, FIFO or huge file there is unreadable, never read.
      kept = ranges::parse_sidecar(root_.read(sidecar_, kSidecarMax), size);
    } catch (const Error&) {}
  }
  if (kept && length < size) {
    // Shorter than the sidecar's file (cut by someone): trust only what is there.
    for (auto& r : *kept) r.done = std::min(r.done, length > r.start ? length - r.start : 0);
  }
  if (kept && length > size) {
    // Longer (grown by someone): the sidecar's ranges cover [0, size), the rest is nobody's.
    if (::ftruncate(fd_.get(), static_cast<off_t>(size)) != 0) io_error(job_.partial_path, "cannot truncate");
    length = size;
  }
  if (!kept && (length > size || had_sidecar)) {
    observer.on_restart(job_, length > size ? "the partial file is longer than the file; starting over"
                                            : "the partial file's range record is unreadable; starting over");
    if (::ftruncate(fd_.get(), 0) != 0) io_error(job_.partial_path, "cannot truncate");
    remove_sidecar();
    length = 0;
  }
  if (kept) {
    ranges_ = std::move(*kept);
  } else {
    ranges_ = ranges::plan(size, connections, min_split);
    ranges::mark_prefix_done(ranges_, length);
  }
  have_ = ranges::done_bytes(ranges_);
  pending_.assign(ranges_.size(), {});
  written_back_.clear();
  for (const auto& r : ranges_) written_back_.push_back(r.next());
  if (split()) {
    save_sidecar();  // before the file grows to its full size: a full-size file without one is a finished stream
    preallocate(fd_.get(), size, job_.partial_path, size - have_);
  }
  hasher_.start(fd_.get(), job_.partial_path, job_.spec);
  write_behind_.start(fd_.get());
  advance_hash();
}

void PartialFile::close() {
  hasher_.stop();
  write_behind_.finish();
  fd_.reset();
  lock_.release();
}

bool PartialFile::all_complete() const {
  return std::all_of(ranges_.begin(), ranges_.end(), [](const ranges::Range& r) { return r.complete(); });
}

void PartialFile::write(std::size_t i, const char* data, std::size_t n) {
  std::string& pending = pending_[i];
  if (pending.empty() && n >= kWriteChunk) {  // nothing gathered, enough to write as it is
    commit(i, data, n);
    return;
  }
  if (pending.capacity() < kWriteChunk) pending.reserve(kWriteChunk);
  pending.append(data, n);
  if (pending.size() >= kWriteChunk || missing(i) == 0) flush(i);
}

void PartialFile::flush(std::size_t i) {
  std::string& pending = pending_[i];
  if (pending.empty()) return;
  commit(i, pending.data(), pending.size());
  pending.clear();
}

void PartialFile::commit(std::size_t i, const char* data, std::size_t n) {
  pwrite_all(fd_.get(), data, n, ranges_[i].next(), job_.partial_path, job_.spec.size - have_);
  ranges_[i].done += n;
  have_ += n;
  write_behind_.wrote(n);
  start_write_back(i);
  if (i == frontier_) advance_hash();
}

void PartialFile::flush_all() {
  bool wrote = false;
  for (std::size_t i = 0; i < pending_.size(); ++i)
    if (!pending_[i].empty()) {
      flush(i);
      wrote = true;
    }
  if (wrote && split() && std::chrono::steady_clock::now() - sidecar_written_ > kSidecarInterval) save_sidecar();
}

void PartialFile::start_write_back(std::size_t i) {
  const ranges::Range& r = ranges_[i];
  std::uint64_t from = written_back_[i], to = r.next();
  if (to - from < kWriteBehind && !(r.complete() && to > from)) return;
  // Advisory: where it fails (a file system without it), the final fsync does all.
  ::sync_file_range(fd_.get(), static_cast<off_t>(from), static_cast<off_t>(to - from), SYNC_FILE_RANGE_WRITE);
  written_back_[i] = to;
}

void PartialFile::save_sidecar() {
  if (!split()) return;
  root_.write_atomic(sidecar_, ranges::format_sidecar(job_.spec.size, ranges_), std::filesystem::perms(0644),
                     util::Durability::process_crash);
  sidecar_written_ = std::chrono::steady_clock::now();
}

void PartialFile::save_sidecar_now_and_then(std::size_t i) {
  if (split() && (ranges_[i].complete() || std::chrono::steady_clock::now() - sidecar_written_ > kSidecarInterval))
    save_sidecar();
}

void PartialFile::remove_sidecar() {
  try {
    root_.remove(sidecar_);
  } catch (const Error&) {  // nothing to remove, or nothing that can be: the next open judges it
  }
}

void PartialFile::start_over() {
  hasher_.stop();
  continue_as_one_stream(0);
  hasher_.start(fd_.get(), job_.partial_path, job_.spec);
}

void PartialFile::advance_hash() {
  while (frontier_ < ranges_.size() && ranges_[frontier_].complete()) ++frontier_;
  hasher_.advance(ranges::contiguous(ranges_));
}

void PartialFile::continue_as_one_stream(std::uint64_t keep) {
  if (::ftruncate(fd_.get(), static_cast<off_t>(keep)) != 0) io_error(job_.partial_path, "cannot truncate");
  remove_sidecar();
  ranges_ = {ranges::Range{0, job_.spec.size, keep}};
  pending_.assign(1, {});
  written_back_.assign(1, keep);
  frontier_ = 0;
  have_ = keep;
}

}  // namespace provkit::download
