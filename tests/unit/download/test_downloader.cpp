// The download engine's local paths (no server needed): verification,
// resume bookkeeping, keeping mismatches aside, assembly. Transfers over HTTP
// are covered by tests/integration/hf-fetch against the Hub simulator.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "provkit/download/downloader.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"

#include "support/recording_observer.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::download;
namespace fs = std::filesystem;

namespace {
using provkit::test::TempDir;

using Recorder = provkit::test::RecordingObserver;

// Where these jobs' files would come from: never asked (or, on port 9, refused by the kernel).
struct LocalSource : download::Source {
  std::string resolve(const Job& j) override { return j.url; }
  bool expired(const http::Result&, const std::string&, const std::string&) const override { return false; }
  std::string expired_note(const http::Result&) const override { return {}; }
  std::string bearer_token(const std::string&, const std::string&) const override { return {}; }
  Error refusal(const Job& j, const http::Response& r) const override {
    return Error(ExitCode::network, j.spec.path + ": HTTP " + std::to_string(r.status));
  }
};
LocalSource source;

Job job_in(const fs::path& dir, const std::string& content, const std::string& name = "f") {
  Job j;
  j.spec = {name, content.size(), util::sha256_hex(content), util::git_blob_id(content)};
  j.url = "http://127.0.0.1:9/never-contacted";
  j.final_path = dir / "blobs" / name;
  j.partial_path = dir / "blobs" / (name + ".provkit-partial");
  j.rejected_prefix = dir / "blobs" / name;
  return j;
}
}  // namespace

TEST_CASE("verify_file: OK, MISSING, SIZE MISMATCH, SHA256 MISMATCH, GIT OID MISMATCH", "[fetch]") {
  TempDir tmp("fetch-verify");
  const fs::path& d = tmp.path;
  std::string content = "hello\n";
  FileSpec spec{"f", content.size(), util::sha256_hex(content), "ce013625030ba8dba906f756967f9e9ca394464a"};
  util::write_file_atomic(d / "f", content);
  auto v = verify_file(d / "f", spec);
  CHECK(v.state == FileState::ok);
  CHECK(v.sha256 == util::sha256_hex(content));
  CHECK(verify_file(d / "absent", spec).state == FileState::missing);
  fs::create_symlink("absent", d / "dangling");
  CHECK(verify_file(d / "dangling", spec).state == FileState::missing);
  util::write_file_atomic(d / "short", "hell");
  CHECK(verify_file(d / "short", spec).state == FileState::size_mismatch);
  util::write_file_atomic(d / "wrong", "hellO\n");
  CHECK(verify_file(d / "wrong", spec).state == FileState::sha256_mismatch);
  FileSpec oid_only{"f", content.size(), std::nullopt, std::string(40, '0')};
  CHECK(verify_file(d / "f", oid_only).state == FileState::git_oid_mismatch);
  CHECK(state_name(FileState::size_mismatch) == "SIZE MISMATCH");
}

TEST_CASE("a complete partial file is verified and renamed without any request", "[fetch]") {
  TempDir tmp("fetch-partial-done");
  const fs::path& d = tmp.path;
  std::string content(100000, 'x');
  Job j = job_in(d, content);
  util::write_file_atomic(j.partial_path, content);
  Recorder rec;
  auto results = Downloader(Options{}, source).run({j}, rec);
  REQUIRE(results.size() == 1);
  CHECK(results[0].outcome == Outcome::downloaded);
  CHECK(results[0].resumed_from == content.size());
  CHECK(results[0].bytes_transferred == 0);
  CHECK(util::read_file(j.final_path) == content);
  CHECK_FALSE(fs::exists(j.partial_path));
}

TEST_CASE("a complete partial with wrong bytes is kept aside, never at the final path", "[fetch]") {
  TempDir tmp("fetch-partial-bad");
  const fs::path& d = tmp.path;
  std::string content(5000, 'x'), wrong(5000, 'y');
  Job j = job_in(d, content);
  util::write_file_atomic(j.partial_path, wrong);
  Recorder rec;
  auto r = Downloader(Options{}, source).run({j}, rec)[0];
  CHECK(r.outcome == Outcome::mismatch);
  CHECK(r.mismatch == Mismatch::sha256);
  CHECK(r.reason == ReasonId(FileFailure::mismatch));
  CHECK(r.reason->code() == ExitCode::check_failed);
  CHECK_THAT(r.message, Catch::Contains(util::sha256_hex(content)) && Catch::Contains(util::sha256_hex(wrong)));
  CHECK_FALSE(fs::exists(j.final_path));
  CHECK(r.rejected == fs::path(j.rejected_prefix.string() + ".bad-" + util::sha256_hex(wrong)));
  CHECK(util::read_file(r.rejected) == wrong);
}

TEST_CASE("content already in place is verified, not fetched; a wrong copy is moved aside", "[fetch]") {
  TempDir tmp("fetch-present");
  const fs::path& d = tmp.path;
  std::string a = "aaaa", b = "bbbb";
  Job ja = job_in(d, a, "a");
  util::write_file_atomic(ja.final_path, a);
  Job jb = job_in(d, b, "b");
  util::write_file_atomic(jb.final_path, "BBBB");  // corrupted copy
  util::write_file_atomic(jb.partial_path, b);     // and a complete partial to finish from
  Recorder rec;
  auto rs = Downloader(Options{}, source).run({ja, jb}, rec);
  CHECK(rs[0].outcome == Outcome::present);
  CHECK(rs[1].outcome == Outcome::downloaded);
  CHECK(util::read_file(jb.final_path) == b);
  // Kept aside while the good copy was fetched, removed once it was published (one .bad- per blob at most).
  CHECK_FALSE(fs::exists(jb.rejected_prefix.string() + ".bad-" + util::sha256_hex("BBBB")));
  CHECK(rec.events.front() == "finish a");
}

TEST_CASE("an over-long partial is discarded and the file fetched from the start", "[fetch]") {
  TempDir tmp("fetch-overlong");
  const fs::path& d = tmp.path;
  Job j = job_in(d, "abc");
  util::write_file_atomic(j.partial_path, "abcdef");
  Recorder rec;
  Options o;
  o.http.retry.tries = 1;
  o.http.connect_timeout_s = 2;
  auto r = Downloader(o, source).run({j}, rec)[0];
  // Nothing listens on port 9: the fetch fails, but it asked from byte 0.
  CHECK(r.outcome == Outcome::failed);
  CHECK(r.reason == ReasonId(FileFailure::network));
  CHECK(r.resumed_from == 0);
  CHECK(fs::file_size(j.partial_path) == 0);
  CHECK(rec.events.at(0) == "restart f");
}

TEST_CASE("assembly: concatenates in order, skips when unchanged, refuses a wrong sha256", "[fetch]") {
  TempDir tmp("fetch-assemble");
  const fs::path& d = tmp.path;
  util::write_file_atomic(d / "p1", "hello ");
  util::write_file_atomic(d / "p2", "world");
  AssembleJob job{
      d / "out" / "whole", {d / "p1", d / "p2"}, util::sha256_hex("hello world"), 11, d / "state" / "whole.stamp"};
  auto r1 = assemble(job);
  CHECK(r1.outcome == AssembleOutcome::assembled);
  CHECK(util::read_file(job.output) == "hello world");
  CHECK(r1.sha256 == util::sha256_hex("hello world"));
  auto r2 = assemble(job);
  CHECK(r2.outcome == AssembleOutcome::unchanged);
  CHECK(r2.sha256 == r1.sha256);
  CHECK(r2.size == 11);
  // A part replaced (new inode) means the inputs changed: assembled again.
  util::write_file_atomic(d / "p2", "World");
  job.sha256 = util::sha256_hex("hello World");
  CHECK(assemble(job).outcome == AssembleOutcome::assembled);
  CHECK(util::read_file(job.output) == "hello World");
  // A wrong expected hash: the output is not replaced, the bytes are kept aside.
  util::write_file_atomic(d / "p1", "HELLO ");
  auto bad = assemble(job);
  CHECK(bad.outcome == AssembleOutcome::mismatch);
  CHECK(bad.mismatch == Mismatch::sha256);
  CHECK_THAT(bad.message,
             Catch::Contains(util::sha256_hex("hello World")) && Catch::Contains(util::sha256_hex("HELLO World")));
  CHECK(util::read_file(job.output) == "hello World");
  CHECK(util::read_file(bad.rejected) == "HELLO World");
  // A wrong size is told as such, whatever the hash.
  job.size = 12;
  auto short_one = assemble(job);
  CHECK(short_one.outcome == AssembleOutcome::mismatch);
  CHECK(short_one.mismatch == Mismatch::size);
}

TEST_CASE("assembly: a damaged stamp vouches for nothing; assembled again and the stamp rewritten", "[fetch]") {
  TempDir tmp("fetch-assemble-stamp");
  const fs::path& d = tmp.path;
  util::write_file_atomic(d / "p1", "hello ");
  util::write_file_atomic(d / "p2", "world");
  AssembleJob job{
      d / "out" / "whole", {d / "p1", d / "p2"}, util::sha256_hex("hello world"), 11, d / "state" / "whole.stamp"};
  REQUIRE(assemble(job).outcome == AssembleOutcome::assembled);
  const std::string good = util::read_file(job.stamp);
  const std::string state = good.substr(0, good.find("result "));
  const std::string sha = util::sha256_hex("hello world");
  // What an interrupted editor, a full disk or a careless hand leaves as the result line.
  for (const std::string& result :
       {"result " + sha + " 99999999999999999999999\n", "result " + sha + " \n", "result " + sha + " 11",
        "result " + sha + " -11\n", "result " + sha + " eleven\n", "result " + std::string(64, 'z') + " 11\n",
        "result " + std::string(64, 'a') + " 11\n", "result " + sha + " 12\n", "result " + sha.substr(0, 40)}) {
    CAPTURE(result);
    util::write_file_atomic(job.stamp, state + result);
    AssembleResult r;
    REQUIRE_NOTHROW(r = assemble(job));
    CHECK(r.outcome == AssembleOutcome::assembled);
    CHECK(r.sha256 == sha);
    CHECK(r.size == 11);
    CHECK(util::read_file(job.stamp).ends_with("result " + sha + " 11\n"));  // rewritten: trusted again
    CHECK(assemble(job).outcome == AssembleOutcome::unchanged);
  }
}

TEST_CASE("verified stamps: trusted while the file is unchanged, never for other hashes", "[fetch]") {
  TempDir tmp("fetch-stamp");
  const fs::path& dir = tmp.path;
  std::string content = "the bytes of a verified file\n";
  Job j = job_in(dir, content);
  fs::create_directories(j.final_path.parent_path());
  util::write_file_atomic(j.final_path, content);
  fs::path stamp = dir / "state" / "verified" / "f.stamp";
  util::Root root(dir);

  Verification first = verify_file_stamped(root, j.final_path, j.spec, stamp);
  CHECK(first.state == FileState::ok);
  CHECK_FALSE(first.from_stamp);
  REQUIRE(fs::exists(stamp));

  Verification second = verify_file_stamped(root, j.final_path, j.spec, stamp);
  CHECK(second.state == FileState::ok);
  CHECK(second.from_stamp);
  CHECK(second.sha256 == *j.spec.sha256);

  // A stamp vouches only for the hashes it recorded.
  FileSpec other = j.spec;
  other.sha256 = std::string(64, '0');
  Verification wrong = verify_file_stamped(root, j.final_path, other, stamp);
  CHECK_FALSE(wrong.from_stamp);
  CHECK(wrong.state == FileState::sha256_mismatch);

  // One byte changed in place (same inode, same size): its mtime moved, so it is read again.
  {
    std::fstream f(j.final_path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('T');
  }
  Verification after = verify_file_stamped(root, j.final_path, j.spec, stamp);
  CHECK_FALSE(after.from_stamp);
  CHECK(after.state == FileState::sha256_mismatch);

  // A torn stamp is not trusted.
  util::write_file_atomic(j.final_path, content);
  verify_file_stamped(root, j.final_path, j.spec, stamp);
  std::string text = util::read_file(stamp);
  util::write_file_atomic(stamp, text.substr(0, text.size() / 2));
  CHECK_FALSE(verify_file_stamped(root, j.final_path, j.spec, stamp).from_stamp);
}

TEST_CASE("verified stamps key on the file, not on ctime or the cache's spelling; unwritable ones warn", "[fetch]") {
  TempDir tmp("fetch-stamp-identity");
  const fs::path& dir = tmp.path;
  std::string content = "bytes verified once\n";
  Job j = job_in(dir, content);
  fs::create_directories(j.final_path.parent_path());
  util::write_file_atomic(j.final_path, content);
  fs::path stamp = dir / "state" / "verified" / "f.stamp";
  util::Root root(dir);
  REQUIRE_FALSE(verify_file_stamped(root, j.final_path, j.spec, stamp).from_stamp);

  // A hard link (as mirror export makes) changes the ctime only: the stamp still vouches.
  fs::create_hard_link(j.final_path, dir / "exported");
  CHECK(verify_file_stamped(root, j.final_path, j.spec, stamp).from_stamp);
  // The same files through another spelling of the directory.
  fs::path spelled = dir / "." / "state" / ".." / j.final_path.lexically_relative(dir);
  util::Root spelled_root(dir / "state" / "..");
  CHECK(verify_file_stamped(spelled_root, spelled, j.spec, dir / "state" / ".." / "state" / "verified" / "f.stamp")
            .from_stamp);

  // A stamp that cannot be written is a warning, and the file is verified all the same.
  fs::path blocked = dir / "blocked";
  util::write_file_atomic(blocked, "a file where the stamp's directory should be");
  Verification v = verify_file_stamped(root, j.final_path, j.spec, blocked / "verified" / "f.stamp");
  CHECK(v.state == FileState::ok);
  CHECK_FALSE(v.from_stamp);
  CHECK_THAT(v.stamp_warning, Catch::Contains("stamp was not written"));
  // A FIFO as the stamp is no stamp (and is replaced), never a read that waits.
  fs::path fifo_stamp = dir / "state" / "verified" / "fifo.stamp";
  REQUIRE(::mkfifo(fifo_stamp.c_str(), 0644) == 0);
  CHECK_FALSE(verify_file_stamped(root, j.final_path, j.spec, fifo_stamp).from_stamp);
  CHECK(fs::is_regular_file(fs::symlink_status(fifo_stamp)));
}

TEST_CASE("a local file that cannot be opened is util::FileRefusal's, from the errno", "[fetch]") {
  TempDir tmp("fetch-local-refusal");
  const fs::path& d = tmp.path;
  util::write_file_atomic(d / "p1", "ab");
  AssembleJob job;
  job.output = d / "whole";
  job.parts = {d / "p1", d / "p2"};  // p2 is missing
  job.stamp = d / "whole.stamp";
  job.root = d;
  try {
    assemble(job);
    FAIL("assembled from a missing part");
  } catch (const Error& e) {
    CHECK(e.is(util::FileRefusal::not_found));
    CHECK(e.code() == ExitCode::check_failed);
  }
  // The blob lock's own file: a directory stands where it goes.
  Job j = job_in(d, "abc");
  j.lock_path = d / "lockdir";
  fs::create_directories(j.lock_path);
  Recorder rec;
  try {
    Downloader(Options{}, source).run({j}, rec);
    FAIL("a directory was taken for the lock file");
  } catch (const Error& e) {
    CHECK(e.is(util::FileRefusal::not_regular));
  }
}
