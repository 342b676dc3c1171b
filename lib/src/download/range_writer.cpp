#include "range_writer.hpp"

#include <fcntl.h>

#include "io.hpp"

namespace provkit::download {

void RangeWriter::start(int fd, RangeRecord& record, Committed committed) {
  fd_ = fd;
  record_ = &record;
  committed_ = std::move(committed);
  pending_.assign(record.ranges().size(), {});
  written_back_.clear();
  for (const auto& r : record.ranges()) written_back_.push_back(r.next());
  write_behind_.start(fd);
}

void RangeWriter::write(std::size_t i, const char* data, std::size_t n) {
  std::string& pending = pending_[i];
  if (pending.empty() && n >= kWriteChunk) {  // nothing gathered, enough to write as it is
    commit(i, data, n);
    return;
  }
  if (pending.capacity() < kWriteChunk) pending.reserve(kWriteChunk);
  pending.append(data, n);
  if (pending.size() >= kWriteChunk || record_->ranges()[i].missing() == pending.size()) flush(i);
}

void RangeWriter::flush(std::size_t i) {
  std::string& pending = pending_[i];
  if (pending.empty()) return;
  commit(i, pending.data(), pending.size());
  pending.clear();
}

bool RangeWriter::flush_all() {
  bool wrote = false;
  for (std::size_t i = 0; i < pending_.size(); ++i)
    if (!pending_[i].empty()) {
      flush(i);
      wrote = true;
    }
  return wrote;
}

void RangeWriter::commit(std::size_t i, const char* data, std::size_t n) {
  pwrite_all(fd_, data, n, record_->ranges()[i].next(), path_, size_ - record_->have());
  bool moved = record_->advance(i, n);
  write_behind_.wrote(n);
  start_write_back(i);
  if (committed_) committed_(i, moved);
}

void RangeWriter::start_write_back(std::size_t i) {
  const ranges::Range& r = record_->ranges()[i];
  std::uint64_t from = written_back_[i], to = r.next();
  if (to - from < kWriteBehind && !(r.complete() && to > from)) return;
  // Advisory: where it fails (a file system without it), the final fsync does all.
  ::sync_file_range(fd_, static_cast<off_t>(from), static_cast<off_t>(to - from), SYNC_FILE_RANGE_WRITE);
  written_back_[i] = to;
}

void RangeWriter::as_one_stream(std::uint64_t keep) {
  pending_.assign(1, {});
  written_back_.assign(1, keep);
}

}  // namespace provkit::download
