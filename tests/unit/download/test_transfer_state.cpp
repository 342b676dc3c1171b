// The download engine's state table and the judgements of one range
// transfer, socket-free: each case walks a file through the answers a server
// can give (what judge_head/judge_body/judge_end make of them, and the
// events they become) and checks where the table takes it.
#include <catch2/catch.hpp>

#include "download/transfer_state.hpp"

using namespace provkit;
using download::EndVerdict;
using download::HeadVerdict;
using download::TransferEvent;
using download::TransferState;
using download::transition;

namespace {

constexpr std::uint64_t kSize = 4000;

http::ContentRange content_range(std::uint64_t first, std::uint64_t last, std::optional<std::uint64_t> total) {
  http::ContentRange cr;
  cr.first = first;
  cr.last = last;
  cr.total = total;
  return cr;
}

// A file cut in four ranges of 1000 bytes, probing, its first range answered as asked.
TransferState ranged_file() {
  TransferState s = transition(TransferState::queued, TransferEvent::opened_split);
  REQUIRE(s == TransferState::probing);
  REQUIRE(download::judge_head(206, content_range(0, 999, kSize), 0, kSize, true, false) == HeadVerdict::ranged);
  s = transition(s, TransferEvent::range_honoured);
  REQUIRE(s == TransferState::ranged);
  return s;
}

bool is_internal(const Error& e) { return e.is(Reason::internal); }

}  // namespace

TEST_CASE("transfer state: a whole-file 200 answer to a range request leaves ranges, then one stream",
          "[download][state]") {
  TransferState s = transition(TransferState::queued, TransferEvent::opened_split);
  // The probe of a split file answered with 200: never written at the range's offset.
  CHECK(download::judge_head(200, std::nullopt, 0, kSize, true, false) == HeadVerdict::whole_file_split);
  s = transition(s, TransferEvent::whole_file_answer);
  CHECK(s == TransferState::leaving_ranges);
  // The attempt stopped it on purpose: no failure to tell.
  download::AttemptEnd end;
  end.failure = http::FailureKind::aborted;
  end.stopped = true;
  end.split = true;
  CHECK(download::judge_end(end) == EndVerdict::stopped);
  // Another range answered the same way meanwhile changes nothing; then one stream.
  CHECK(transition(s, TransferEvent::whole_file_answer) == TransferState::leaving_ranges);
  s = transition(s, TransferEvent::ranges_left);
  CHECK(s == TransferState::streaming);
  // As one stream from byte 0, a 200 is the stream's own answer; resumed past 0 it starts the file over.
  CHECK(download::judge_head(200, std::nullopt, 0, kSize, false, false) == HeadVerdict::whole_file);
  CHECK(download::judge_head(200, std::nullopt, 1500, kSize, false, true) == HeadVerdict::whole_file_restart);
  CHECK(transition(s, TransferEvent::stream_started_over) == TransferState::streaming);
  CHECK(transition(s, TransferEvent::verified) == TransferState::done);
  // A file that failed meanwhile stays failing.
  CHECK(transition(TransferState::failing, TransferEvent::whole_file_answer) == TransferState::failing);
  // A 200 to a range never takes a single stream out of ranges it does not have.
  CHECK_THROWS_MATCHES(transition(TransferState::streaming, TransferEvent::whole_file_answer), Error,
                       Catch::Predicate<Error>(is_internal));
}

TEST_CASE("transfer state: a 206 for another range or another file size fails the transfer", "[download][state]") {
  CHECK(download::judge_head(206, content_range(500, 999, kSize), 1000, kSize, true, true) == HeadVerdict::wrong_range);
  CHECK(download::judge_head(206, std::nullopt, 0, kSize, true, false) == HeadVerdict::wrong_range);
  CHECK(download::judge_head(206, content_range(0, 999, kSize + 1), 0, kSize, true, false) == HeadVerdict::wrong_total);
  CHECK(download::judge_head(206, content_range(1000, 1999, std::nullopt), 1000, kSize, true, true) ==
        HeadVerdict::ranged);
}

TEST_CASE("transfer state: an overrun is cut at the range's end in a split file, a failure of a single stream",
          "[download][state]") {
  TransferState s = ranged_file();
  // 16 KiB delivered where the range lacks 40 bytes: take the 40 (the rest is other ranges'), stop there.
  download::BodyVerdict v = download::judge_body(16384, 40, true);
  CHECK(v.take == 40);
  CHECK(v.stop);
  CHECK_FALSE(v.too_long);
  download::AttemptEnd end;
  end.failure = http::FailureKind::aborted;
  end.stopped = true;
  end.range_complete = true;
  end.wrote = true;
  end.split = true;
  CHECK(download::judge_end(end) == EndVerdict::stopped);
  CHECK(s == TransferState::ranged);
  // Exactly what is missing is no overrun.
  v = download::judge_body(40, 40, true);
  CHECK((v.take == 40 && !v.stop && !v.too_long));
  // A single stream has no other ranges: more than the file is wrong bytes, the file fails.
  v = download::judge_body(16384, 40, false);
  CHECK(v.too_long);
  CHECK(v.take == 0);
  end = {};
  end.failure = http::FailureKind::aborted;  // raised by the attempt, not stopped on purpose
  CHECK(download::judge_end(end) == EndVerdict::failed);
  s = transition(TransferState::streaming, TransferEvent::transfer_failed);
  CHECK(s == TransferState::failing);
  CHECK(transition(s, TransferEvent::drained) == TransferState::failed);
}

TEST_CASE("transfer state: a connection reset mid-range is retried from the first byte not received",
          "[download][state]") {
  ranged_file();
  // Range [1000, 2000) had 300 bytes written when the connection was reset: the retry asks for the rest, bounded.
  download::ranges::Range r{1000, 2000, 300};
  download::RangeBounds b = download::range_bounds(r);
  CHECK(b.from == 1300);
  REQUIRE(b.to);
  CHECK(*b.to == 1999);
  // From byte 0 the request is bounded too (CDNs refuse range-less GETs of large files).
  b = download::range_bounds(download::ranges::Range{0, kSize, 0});
  CHECK((b.from == 0 && b.to && *b.to == kSize - 1));
  // The retry's 206 from there is the range's answer; one from where the reset was is not.
  CHECK(download::judge_head(206, content_range(1300, 1999, kSize), 1300, kSize, true, true) == HeadVerdict::ranged);
  CHECK(download::judge_head(206, content_range(1000, 1999, kSize), 1300, kSize, true, true) ==
        HeadVerdict::wrong_range);
}

TEST_CASE("transfer state: resets past the retries fail the file; later failures do not change the first",
          "[download][state]") {
  TransferState s = ranged_file();
  download::AttemptEnd end;
  end.failure = http::FailureKind::network;  // the session gave up after its retries
  end.wrote = true;
  end.split = true;
  CHECK(download::judge_end(end) == EndVerdict::failed);
  s = transition(s, TransferEvent::transfer_failed);
  CHECK(s == TransferState::failing);
  CHECK(transition(s, TransferEvent::transfer_failed) == TransferState::failing);
  CHECK(transition(s, TransferEvent::range_honoured) == TransferState::failing);
  // A failing file is never verified: its transfers end, then it is failed.
  CHECK_THROWS_MATCHES(transition(s, TransferEvent::verified), Error, Catch::Predicate<Error>(is_internal));
  CHECK(transition(s, TransferEvent::drained) == TransferState::failed);
}

TEST_CASE("transfer state: a short body is asked for again in a split file with progress, else the file fails",
          "[download][state]") {
  download::AttemptEnd end;
  end.ok_status = true;
  end.split = true;
  end.wrote = true;  // the range got bytes before the body ended
  CHECK(download::judge_end(end) == EndVerdict::range_again);
  end.wrote = false;  // nothing at all: asking again would loop
  CHECK(download::judge_end(end) == EndVerdict::short_body);
  end.split = false;  // a single stream that ended early
  end.wrote = true;
  CHECK(download::judge_end(end) == EndVerdict::short_body);
  end.range_complete = true;
  CHECK(download::judge_end(end) == EndVerdict::complete);
  CHECK(transition(TransferState::streaming, TransferEvent::transfer_failed) == TransferState::failing);
}

TEST_CASE("transfer state: refusals and expiry of the redirect target", "[download][state]") {
  download::AttemptEnd end;
  end.split = true;
  CHECK(download::judge_end(end) == EndVerdict::refused);  // a final non-2xx
  end.expired = true;
  CHECK(download::judge_end(end) == EndVerdict::expired);
  end.failure = http::FailureKind::network;  // a failure is a failure, whatever the last answer was
  CHECK(download::judge_end(end) == EndVerdict::failed);
}

TEST_CASE("transfer state: the verify-fail path keeps the file aside (done), a replaced partial fails it",
          "[download][state]") {
  TransferState s = ranged_file();
  CHECK(transition(s, TransferEvent::rejected) == TransferState::done);
  CHECK(transition(TransferState::streaming, TransferEvent::rejected) == TransferState::done);
  CHECK(transition(TransferState::leaving_ranges, TransferEvent::verified) == TransferState::done);
  // Every byte there at once on a resumed file: verified from where opening left it.
  CHECK(transition(TransferState::probing, TransferEvent::verified) == TransferState::done);
  TransferState replaced = transition(s, TransferEvent::replaced);
  CHECK(replaced == TransferState::failing);
  CHECK(transition(replaced, TransferEvent::drained) == TransferState::failed);
}

TEST_CASE("transfer state: done and failed are final; an illegal event is an internal error naming both",
          "[download][state]") {
  for (TransferState s : {TransferState::done, TransferState::failed})
    for (TransferEvent e : {TransferEvent::range_honoured, TransferEvent::verified, TransferEvent::transfer_failed,
                            TransferEvent::drained, TransferEvent::opened_split})
      CHECK_FALSE(download::next_state(s, e));
  try {
    transition(TransferState::done, TransferEvent::range_honoured);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.is(Reason::internal));
    CHECK(std::string(e.what()).find("\"range honoured\" in state \"done\"") != std::string::npos);
  }
  // A file is opened once: never from a state past queued/locked elsewhere.
  CHECK_FALSE(download::next_state(TransferState::ranged, TransferEvent::opened_split));
  CHECK(transition(TransferState::queued, TransferEvent::lock_held_elsewhere) == TransferState::locked_elsewhere);
  CHECK(transition(TransferState::locked_elsewhere, TransferEvent::opened_stream) == TransferState::streaming);
  CHECK(transition(TransferState::locked_elsewhere, TransferEvent::found_in_place) == TransferState::done);
  CHECK_FALSE(download::next_state(TransferState::locked_elsewhere, TransferEvent::lock_held_elsewhere));
}
