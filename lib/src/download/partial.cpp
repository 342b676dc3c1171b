#include "partial.hpp"

#include "provkit/util/fs.hpp"
#include "provkit/util/log.hpp"

namespace provkit::download {

PartialFile::PartialFile(const download::Job& job)
    : job_(job),
      root_(job_root(job)),
      handle_(root_, job.partial_path, job.lock_path),
      record_(root_, util::path_with_suffix(job.partial_path, ".ranges"), job.spec.size),
      writer_(job.partial_path, job.spec.size) {}

void PartialFile::open(int connections, std::uint64_t min_split, download::Observer& observer) {
  std::uint64_t size = job_.spec.size;
  std::uint64_t length = handle_.open();
  ResumePlan plan = record_.load(length, connections, min_split);
  util::log::debug("download", [&] { return job_.spec.path + ": " + plan.describe(); });
  if (std::string note = plan.restart_note(); !note.empty()) observer.on_restart(job_, note);
  if (plan.truncate_to) handle_.truncate(*plan.truncate_to);
  if (split()) {
    record_.save();  // before the file grows to its full size: a full-size file without one is a finished stream
    preallocate(handle_.fd(), size, job_.partial_path, size - have());
  }
  hasher_.start(handle_.fd(), job_.partial_path, job_.spec);
  writer_.start(handle_.fd(), record_, [this](std::size_t, bool frontier_moved) {
    if (frontier_moved) hasher_.advance(ranges::contiguous(record_.ranges()));
  });
  hasher_.advance(ranges::contiguous(record_.ranges()));
}

void PartialFile::close() {
  hasher_.stop();
  writer_.finish();
  try {
    record_.drain();  // the sidecar written before the lock is let go
  } catch (const Error&) {
    // A sidecar that could not be rewritten: the next run judges what is there (an older sidecar claims less).
  }
  handle_.close();
}

void PartialFile::start_over() {
  hasher_.stop();
  continue_as_one_stream(0);
  hasher_.start(handle_.fd(), job_.partial_path, job_.spec);
}

void PartialFile::continue_as_one_stream(std::uint64_t keep) {
  handle_.truncate(keep);
  record_.as_one_stream(keep);
  writer_.as_one_stream(keep);
}

}  // namespace provkit::download
