#include "transfer_state.hpp"

#include <string>

namespace provkit::download {

std::string_view state_name(TransferState s) {
  switch (s) {
    case TransferState::queued: return "queued";
    case TransferState::locked_elsewhere: return "locked elsewhere";
    case TransferState::probing: return "probing";
    case TransferState::ranged: return "ranged";
    case TransferState::streaming: return "streaming";
    case TransferState::leaving_ranges: return "leaving ranges";
    case TransferState::failing: return "failing";
    case TransferState::done: return "done";
    case TransferState::failed: return "failed";
  }
  return "?";
}

std::string_view event_name(TransferEvent e) {
  switch (e) {
    case TransferEvent::lock_held_elsewhere: return "lock held elsewhere";
    case TransferEvent::found_in_place: return "found in place";
    case TransferEvent::opened_split: return "opened split";
    case TransferEvent::opened_stream: return "opened as one stream";
    case TransferEvent::range_honoured: return "range honoured";
    case TransferEvent::whole_file_answer: return "whole file answered to a range";
    case TransferEvent::stream_started_over: return "stream started over";
    case TransferEvent::ranges_left: return "ranges left";
    case TransferEvent::transfer_failed: return "transfer failed";
    case TransferEvent::drained: return "drained";
    case TransferEvent::verified: return "verified";
    case TransferEvent::rejected: return "rejected";
    case TransferEvent::replaced: return "replaced";
  }
  return "?";
}

TransferState transition(TransferState from, TransferEvent event) {
  if (auto to = next_state(from, event)) return *to;
  throw Error(Reason::internal, "download engine: event \"" + std::string(event_name(event)) + "\" in state \"" +
                                    std::string(state_name(from)) + "\" is not a transition of the engine");
}

RangeBounds range_bounds(const ranges::Range& r) {
  RangeBounds b;
  b.from = r.next();
  if (r.end > r.next()) b.to = r.end - 1;
  return b;
}

HeadVerdict judge_head(long status, const std::optional<http::ContentRange>& content_range, std::uint64_t next,
                       std::uint64_t size, bool split, bool resumed) {
  if (status == 206) {
    if (!content_range || content_range->first != next) return HeadVerdict::wrong_range;
    if (content_range->total && *content_range->total != size) return HeadVerdict::wrong_total;
    return HeadVerdict::ranged;
  }
  if (split) return HeadVerdict::whole_file_split;
  return resumed ? HeadVerdict::whole_file_restart : HeadVerdict::whole_file;
}

BodyVerdict judge_body(std::size_t n, std::uint64_t missing, bool split) {
  BodyVerdict v;
  if (n <= missing) {
    v.take = n;
    return v;
  }
  // A range answered past its end (the bytes after it belong to other
  // ranges): take what is this range's and stop there. A single stream has
  // no other ranges: more than the file is a wrong answer.
  if (!split) {
    v.too_long = true;
    return v;
  }
  v.take = static_cast<std::size_t>(missing);
  v.stop = true;
  return v;
}

EndVerdict judge_end(const AttemptEnd& end) {
  if (end.failure == http::FailureKind::aborted && end.stopped) return EndVerdict::stopped;
  if (end.failure != http::FailureKind::none) return EndVerdict::failed;
  // Redirect targets expire (signed CDN URLs: about an hour on the Hub).
  if (end.expired) return EndVerdict::expired;
  if (!end.ok_status) return EndVerdict::refused;
  if (!end.range_complete) return end.wrote && end.split ? EndVerdict::range_again : EndVerdict::short_body;
  return EndVerdict::complete;
}

}  // namespace provkit::download
