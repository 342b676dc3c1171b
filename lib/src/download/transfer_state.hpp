#pragma once
// The life of one file in the download engine, written out: its states, the
// events that move it, and the table of every allowed (state, event) -> state.
// FileTransfer changes its state only through transition(), which checks the
// table: an event the table does not allow in a state is a bug of the engine,
// a provkit::Error of reason internal, never a silent wrong state.
//
// What the answers of one range transfer mean (judge_head, judge_body,
// judge_end) is here too, as pure functions: RangeAttempt asks them and
// reports what they say; the file turns that into events.
//
//   queued ──lock_held_elsewhere──> locked_elsewhere
//   queued | locked_elsewhere ──found_in_place──> done
//   queued | locked_elsewhere ──opened_split──> probing ──range_honoured──> ranged
//   queued | locked_elsewhere ──opened_stream──> streaming
//   probing | ranged ──whole_file_answer──> leaving_ranges ──ranges_left──> streaming
//   streaming ──stream_started_over──> streaming (a resumed stream answered from byte 0)
//   probing | ranged | streaming | leaving_ranges ──verified | rejected──> done
//   probing | ranged | streaming | leaving_ranges ──transfer_failed | replaced──> failing ──drained──> failed
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "provkit/download/ranges.hpp"
#include "provkit/error.hpp"
#include "provkit/http/client.hpp"
#include "provkit/http/headers.hpp"

namespace provkit::download {

enum class TransferState {
  queued,            // waiting for a free slot (Options::max_parallel)
  locked_elsewhere,  // another process holds its blob lock: taken up once nothing of ours is in flight
  probing,           // split: one range out, until a 206 shows that the server honours ranges
  ranged,            // split: ranges over as many connections as the run's ramp allows (Options::connections at most)
  streaming,         // one stream (a small file, or a split one that left ranges)
  leaving_ranges,    // a range was answered with the whole file: the others end, then one stream
  failing,           // failed: the transfers still in flight end, then `failed`
  done,              // in place (present or downloaded), or kept aside (mismatch): see its result
  failed,
};

enum class TransferEvent {
  lock_held_elsewhere,  // another process holds the blob lock
  found_in_place,       // the right bytes are at the final path already
  opened_split,         // the partial file is open, cut into several ranges
  opened_stream,        // the partial file is open, fetched as one stream
  range_honoured,       // a range request answered with that range (206)
  whole_file_answer,    // a range request of a split file answered with the whole file (200)
  stream_started_over,  // a resumed stream answered from byte 0 with the whole file: the partial file starts over
  ranges_left,          // after a whole-file answer, the other ranges' transfers have ended: one stream from here
  transfer_failed,      // a transfer failed for good (after its retries), or was refused
  drained,              // failing, and no transfer of the file is in flight any more
  verified,             // every byte there, size and hashes right: renamed into place
  rejected,             // every byte there, a hash or the size wrong: kept aside
  replaced,             // the partial file's name no longer names the bytes that were hashed
};

std::string_view state_name(TransferState s);
std::string_view event_name(TransferEvent e);

struct Transition {
  TransferState from;
  TransferEvent event;
  TransferState to;
};

// Every allowed transition; anything else is a bug. The self-loops are there
// on purpose: an event that may come in a state without changing it is named
// as allowed, not ignored.
inline constexpr std::array kTransitions = {
    Transition{TransferState::queued, TransferEvent::lock_held_elsewhere, TransferState::locked_elsewhere},
    Transition{TransferState::queued, TransferEvent::found_in_place, TransferState::done},
    Transition{TransferState::locked_elsewhere, TransferEvent::found_in_place, TransferState::done},
    Transition{TransferState::queued, TransferEvent::opened_split, TransferState::probing},
    Transition{TransferState::locked_elsewhere, TransferEvent::opened_split, TransferState::probing},
    Transition{TransferState::queued, TransferEvent::opened_stream, TransferState::streaming},
    Transition{TransferState::locked_elsewhere, TransferEvent::opened_stream, TransferState::streaming},
    // 206: the probe shows ranges work; later ones change nothing (nor while leaving ranges or failing).
    Transition{TransferState::probing, TransferEvent::range_honoured, TransferState::ranged},
    Transition{TransferState::ranged, TransferEvent::range_honoured, TransferState::ranged},
    Transition{TransferState::streaming, TransferEvent::range_honoured, TransferState::streaming},
    Transition{TransferState::leaving_ranges, TransferEvent::range_honoured, TransferState::leaving_ranges},
    Transition{TransferState::failing, TransferEvent::range_honoured, TransferState::failing},
    // 200 to a range of a split file: the file leaves ranges (unless it is failing already).
    Transition{TransferState::probing, TransferEvent::whole_file_answer, TransferState::leaving_ranges},
    Transition{TransferState::ranged, TransferEvent::whole_file_answer, TransferState::leaving_ranges},
    Transition{TransferState::leaving_ranges, TransferEvent::whole_file_answer, TransferState::leaving_ranges},
    Transition{TransferState::failing, TransferEvent::whole_file_answer, TransferState::failing},
    Transition{TransferState::streaming, TransferEvent::stream_started_over, TransferState::streaming},
    Transition{TransferState::leaving_ranges, TransferEvent::ranges_left, TransferState::streaming},
    // The first failure is the one told; later ones change nothing.
    Transition{TransferState::probing, TransferEvent::transfer_failed, TransferState::failing},
    Transition{TransferState::ranged, TransferEvent::transfer_failed, TransferState::failing},
    Transition{TransferState::streaming, TransferEvent::transfer_failed, TransferState::failing},
    Transition{TransferState::leaving_ranges, TransferEvent::transfer_failed, TransferState::failing},
    Transition{TransferState::failing, TransferEvent::transfer_failed, TransferState::failing},
    Transition{TransferState::failing, TransferEvent::drained, TransferState::failed},
    // Every byte there (also at once, when a resumed file had them all).
    Transition{TransferState::probing, TransferEvent::verified, TransferState::done},
    Transition{TransferState::ranged, TransferEvent::verified, TransferState::done},
    Transition{TransferState::streaming, TransferEvent::verified, TransferState::done},
    Transition{TransferState::leaving_ranges, TransferEvent::verified, TransferState::done},
    Transition{TransferState::probing, TransferEvent::rejected, TransferState::done},
    Transition{TransferState::ranged, TransferEvent::rejected, TransferState::done},
    Transition{TransferState::streaming, TransferEvent::rejected, TransferState::done},
    Transition{TransferState::leaving_ranges, TransferEvent::rejected, TransferState::done},
    Transition{TransferState::probing, TransferEvent::replaced, TransferState::failing},
    Transition{TransferState::ranged, TransferEvent::replaced, TransferState::failing},
    Transition{TransferState::streaming, TransferEvent::replaced, TransferState::failing},
    Transition{TransferState::leaving_ranges, TransferEvent::replaced, TransferState::failing},
};

// Where `event` takes a file in state `from`; nothing when the table does not allow it.
constexpr std::optional<TransferState> next_state(TransferState from, TransferEvent event) {
  for (const Transition& t : kTransitions)
    if (t.from == from && t.event == event) return t.to;
  return std::nullopt;
}

namespace detail {
constexpr bool table_is_a_function() {
  for (std::size_t i = 0; i < kTransitions.size(); ++i)
    for (std::size_t j = i + 1; j < kTransitions.size(); ++j)
      if (kTransitions[i].from == kTransitions[j].from && kTransitions[i].event == kTransitions[j].event) return false;
  return true;
}
constexpr bool terminal(TransferState s) {
  for (const Transition& t : kTransitions)
    if (t.from == s) return false;
  return true;
}
}  // namespace detail
static_assert(detail::table_is_a_function(), "two transitions for one (state, event)");
static_assert(detail::terminal(TransferState::done) && detail::terminal(TransferState::failed),
              "done and failed are final");

// next_state, or provkit::Error (Reason::internal) naming the state and the event.
TransferState transition(TransferState from, TransferEvent event);

// ---- what one range transfer's answers mean --------------------------------------------

// The bytes the next try of `r` asks for: from its first missing byte, always
// bounded (also from byte 0: CDNs have been seen refusing range-less GETs of
// very large files); `to` inclusive, none for an empty range.
struct RangeBounds {
  std::uint64_t from = 0;
  std::optional<std::uint64_t> to;
};
RangeBounds range_bounds(const ranges::Range& r);

enum class HeadVerdict {
  ranged,              // 206 with the range asked for: bytes follow
  wrong_range,         // 206 starting elsewhere: fail the transfer
  wrong_total,         // 206 whose total is not the manifest's size: fail the file (check_failed)
  whole_file_split,    // 200 to a range of a split file: never written at the range's offset; the file leaves ranges
  whole_file_restart,  // 200 to a stream resumed past byte 0: the partial file starts over with this answer
  whole_file,          // 200 to a stream from byte 0: the bytes are the range's
};
// A final 2xx answer's head for a range whose first missing byte is `next`
// (`resumed`: bytes before it are kept) of a file of `size` bytes.
HeadVerdict judge_head(long status, const std::optional<http::ContentRange>& content_range, std::uint64_t next,
                       std::uint64_t size, bool split, bool resumed);

struct BodyVerdict {
  std::size_t take = 0;   // bytes of this delivery that are the range's
  bool stop = false;      // the range is full: end the transfer there (no failure)
  bool too_long = false;  // a single stream sent past the file's size: fail the file (check_failed)
};
// `n` bytes arrived for a range that still lacks `missing`.
BodyVerdict judge_body(std::size_t n, std::uint64_t missing, bool split);

enum class EndVerdict {
  stopped,      // ended on purpose (range full, or the file leaves ranges): nothing to tell
  failed,       // the transfer failed for good (network after retries, or aborted by a verdict)
  expired,      // the source calls the refusal expiry of the URL: resolve again and carry on
  refused,      // a final non-2xx answer: the source's typed refusal
  short_body,   // ended without its bytes: fail the file (what arrived is kept for the next run)
  range_again,  // a split range ended early with progress: started again from where it got to
  complete,     // the range is full
};
struct AttemptEnd {
  http::FailureKind failure = http::FailureKind::none;
  bool stopped = false;         // the attempt ended its transfer on purpose
  bool expired = false;         // the source calls the answer expiry and the file may resolve again
  bool ok_status = false;       // a 2xx final answer
  bool range_complete = false;  // every byte of the range is there
  bool wrote = false;           // this attempt wrote bytes of the range
  bool split = false;
};
EndVerdict judge_end(const AttemptEnd& end);

}  // namespace provkit::download
