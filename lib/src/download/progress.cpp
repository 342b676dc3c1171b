#include "provkit/download/progress.hpp"

namespace provkit::download {

void ProgressTally::begin(std::uint64_t total_bytes, std::size_t files, Clock::time_point now) {
  total_bytes_ = total_bytes;
  files_ = files;
  started_ = now;
}

void ProgressTally::start(const std::string& path, std::uint64_t size, std::uint64_t from) {
  current_[path] = from;
  sizes_[path] = size;
}

void ProgressTally::progress(const std::string& path, std::uint64_t have) {
  auto& cur = current_[path];
  if (have > cur) transferred_ += have - cur;
  cur = have;
}

void ProgressTally::restart(const std::string& path) { current_[path] = 0; }

void ProgressTally::finish(const std::string& path, std::uint64_t size) {
  current_.erase(path);
  ++files_done_;
  done_bytes_ += size;
}

std::optional<ProgressTally::View> ProgressTally::view(Clock::time_point now) const {
  if (current_.empty() || total_bytes_ == 0) return std::nullopt;
  View v = totals(now);
  const auto& [path, have] = *current_.begin();
  v.path = path;
  v.have = have;
  auto size = sizes_.find(path);
  v.size = size == sizes_.end() ? 0 : size->second;
  return v;
}

ProgressTally::View ProgressTally::totals(Clock::time_point now) const {
  View v;
  double secs = std::chrono::duration<double>(now - started_).count();
  v.rate = secs > 0.2 ? static_cast<double>(transferred_) / secs : 0;
  v.done = done_bytes_;
  for (auto& [p, n] : current_) v.done += n;
  v.total = total_bytes_;
  if (v.rate > 0 && total_bytes_ > v.done) v.seconds_left = static_cast<long>((total_bytes_ - v.done) / v.rate);
  v.file_number = files_done_ + 1;
  v.files_done = files_done_;
  v.files = files_;
  return v;
}

}  // namespace provkit::download
