#include "range_record.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "provkit/error.hpp"

namespace provkit::download {

namespace {
// How often a split file's sidecar is rewritten while bytes arrive (and at
// every finished range): what a kill can cost is this much transfer time.
constexpr auto kSidecarInterval = std::chrono::milliseconds(250);
}  // namespace

ResumePlan RangeRecord::load(std::uint64_t length, int connections, std::uint64_t min_split) {
  SidecarOnDisk sidecar = read_sidecar(root_, sidecar_);
  ResumePlan p = plan_resume(sidecar.text, sidecar.there, length, size_, connections, min_split);
  if (p.remove_sidecar) remove();
  ranges_ = p.ranges;
  have_ = p.have;
  frontier_ = 0;
  move_frontier();
  return p;
}

bool RangeRecord::all_complete() const {
  return std::all_of(ranges_.begin(), ranges_.end(), [](const ranges::Range& r) { return r.complete(); });
}

bool RangeRecord::advance(std::size_t i, std::uint64_t n) {
  ranges_[i].done += n;
  have_ += n;
  if (i != frontier_) return false;
  move_frontier();
  return true;
}

void RangeRecord::move_frontier() {
  while (frontier_ < ranges_.size() && ranges_[frontier_].complete()) ++frontier_;
}

SidecarWriter::~SidecarWriter() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void SidecarWriter::rethrow() {
  if (auto e = std::exchange(error_, nullptr)) std::rethrow_exception(e);
}

void SidecarWriter::post(std::string content) {
  {
    std::lock_guard lock(mu_);
    rethrow();
    pending_ = std::move(content);
    if (!worker_.joinable()) worker_ = std::thread([this] { loop(); });
  }
  cv_.notify_all();
}

void SidecarWriter::drain() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !pending_ && !writing_; });
  rethrow();
}

void SidecarWriter::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || pending_; });
    if (!pending_) return;  // stopping, nothing left to write
    std::string content = std::move(*pending_);
    pending_.reset();
    writing_ = true;
    lock.unlock();
    std::exception_ptr failed;
    try {
      root_.write_atomic(path_, content, std::filesystem::perms(0644), util::Durability::process_crash);
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    writing_ = false;
    if (failed && !error_) error_ = failed;
    cv_.notify_all();
  }
}

void RangeRecord::save() {
  if (!split()) return;
  writer_.drain();  // a background write must not land after this one
  root_.write_atomic(sidecar_, ranges::format_sidecar(size_, ranges_), std::filesystem::perms(0644),
                     util::Durability::process_crash);
  written_ = std::chrono::steady_clock::now();
}

void RangeRecord::save_in_background() {
  writer_.post(ranges::format_sidecar(size_, ranges_));
  written_ = std::chrono::steady_clock::now();
}

void RangeRecord::save_now_and_then(std::size_t i) {
  if (split() && (ranges_[i].complete() || std::chrono::steady_clock::now() - written_ > kSidecarInterval))
    save_in_background();
}

void RangeRecord::save_if_due() {
  if (split() && std::chrono::steady_clock::now() - written_ > kSidecarInterval) save_in_background();
}

void RangeRecord::remove() {
  writer_.drain();  // nothing written after the removal
  try {
    root_.remove(sidecar_);
  } catch (const Error&) {  // nothing to remove, or nothing that can be: the next open judges it
  }
}

void RangeRecord::as_one_stream(std::uint64_t keep) {
  remove();
  ranges_ = {ranges::Range{0, size_, keep}};
  frontier_ = 0;
  have_ = keep;
}

}  // namespace provkit::download
