#pragma once
// The download engine: files in, verified files out.
// - sha256 (and the git blob id when one is expected) computed while the bytes
//   stream in; a partial file kept across runs and resumed with Range (its
//   prefix is read once to seed the hashes); a 200 answer to a range request
//   starts the file over, never appends;
// - content reaches its final path only after size and hashes match (atomic
//   rename); a mismatch is kept aside as "<prefix>.bad-<sha256>";
// - transfers run on one http::Session (one curl multi handle, one loop);
//   progress goes to an Observer the tool plugs its display into;
// - where files come from (resolve, re-resolve on expiry, the token, what a
//   refusal means) is a download::Source's business (the Hub's: HubSource).
// The engine's parts are private to the domain (lib/src/download/): engine.hpp
// (run, file transfer, range attempt), partial.hpp, digest.hpp,
// prefix_hasher.hpp, io.hpp.
// Also here: verification of files on disk (no network) and assembly of
// split parts.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "provkit/download/source.hpp"
#include "provkit/error.hpp"
#include "provkit/http/http.hpp"
#include "provkit/util/beneath.hpp"

namespace provkit::download {

namespace fs = std::filesystem;

// What a file must be.
struct FileSpec {
  std::string path;
  std::uint64_t size = 0;
  std::optional<std::string> sha256;
  std::optional<std::string> git_oid;
};

// Which check a file failed (none: it passed them all).
enum class Mismatch { none, size, sha256, git_oid };

// ---- verification (no network) ---------------------------------------------------

enum class FileState { ok, missing, size_mismatch, sha256_mismatch, git_oid_mismatch };
std::string state_name(FileState s);    // "OK", "MISSING", "SIZE MISMATCH", "SHA256 MISMATCH", "GIT OID MISMATCH"
std::string mismatch_name(Mismatch m);  // as state_name says the mismatch states

struct Verification {
  FileState state = FileState::missing;
  std::uint64_t size = 0;
  std::string sha256;       // of what is on disk (computed unless missing or size differs)
  std::string git_oid;      // computed when the spec has one
  bool from_stamp = false;  // taken from a verified stamp, not read
  // The stamp could not be written (read-only cache, full disk): the file is
  // verified all the same; the next run hashes it again. Empty: none.
  std::string stamp_warning;
};

// One sequential read of the file (none when missing, not a regular file or
// the size differs). The path is the caller's: links are followed (a
// snapshot's links to its blobs).
Verification verify_file(const fs::path& path, const FileSpec& spec);
// The same for a file below `root`, opened without following a link.
Verification verify_file(const util::Root& root, const fs::path& path, const FileSpec& spec);

// Verified stamps, so that a rerun with everything in place reads nothing:
// a stamp remembers the file's identity (device, inode, size, mtime to the
// nanosecond, and its resolved real path; never ctime, which a hard link
// such as mirror export's changes, and never the spelling of the cache
// path) and the hashes it verified with. verify_file_stamped trusts a stamp
// whose identity and hashes still match and otherwise verifies the file
// (and stamps it when it is OK). A file rewritten in place gets a new
// mtime; what a stamp cannot see (bits rotting under an unchanged inode, an
// mtime set back on purpose) is what --verify-only, which never trusts
// stamps, is for. Empty stamp: no stamp. `root` holds the file and its stamp.
// Stamps are an optimisation: one that cannot be written is a warning
// (Verification::stamp_warning), never a failure.
Verification verify_file_stamped(const util::Root& root, const fs::path& path, const FileSpec& spec,
                                 const fs::path& stamp);
// What the stamp alone says: ok and from_stamp when it vouches for the file
// as it is (git_oid as the stamp has it), else state missing; reads no content.
Verification verify_file_stamped_only(const util::Root& root, const fs::path& path, const FileSpec& spec,
                                      const fs::path& stamp);
// Writes the stamp; "" or the warning's sentence.
std::string record_verified(const util::Root& root, const fs::path& path, const Verification& v, const fs::path& stamp);
// The identity line a stamp keeps of the file at `path` (links followed);
// nothing when it is not a regular file.
std::optional<std::string> file_identity(const fs::path& path);

// ---- downloads -------------------------------------------------------------------

struct Job {
  FileSpec spec;
  std::string url;           // where its Source resolves it (for the Hub: the resolve URL)
  fs::path final_path;       // verified content goes here
  fs::path partial_path;     // kept across runs
  fs::path rejected_prefix;  // mismatching content is kept at "<prefix>.bad-<sha256>"
  // flock(2)ed while the file is fetched, so that two processes sharing a cache
  // never write the same partial file; empty: no lock. The kernel drops the
  // lock when its holder dies, so a killed run never leaves a stale one.
  fs::path lock_path;
  fs::path verified_stamp;  // see verify_file_stamped; empty: none
  // The directory every path above lies below (the cache or the local dir):
  // nothing below it is opened through a link. Empty: their nearest common directory.
  fs::path root;
};

// A run's jobs, each made when the engine reaches it (make(i), i < count) and dropped once its file is done:
// a job holds six paths and a URL (about 4 KB as std::filesystem::paths), so a run of 300,000 files never
// holds them all at once. `make` is called again for the same index (checked in place, then fetched).
struct JobList {
  std::size_t count = 0;
  std::function<Job(std::size_t)> make;
};

enum class Outcome { present, downloaded, mismatch, failed };

// Why a file is not in place (JobResult::reason, Error::is). The names in --json are the shared reasons
// (docs/json.md) these failures always had: network, auth, check_failed.
enum class FileFailure {
  network,         // 3: the connection failed, or the body ended short, after the retries
  server_error,    // 3: an HTTP error other than those below (5xx, 429 after retries), or an answer that
                   //    does not fit the request (another range)
  no_size,         // 3: a URL given without a size, and the server states none
  access_refused,  // 4: HTTP 401 or 403
  not_found,       // 1: HTTP 404 or 410
  wrong_size,      // 1: the server has another total, or sends more bytes than the expected size
  mismatch,        // 1: every byte there, the size or a hash not the expected one
  replaced,        // 1: the partial file's name was given to other bytes while it was fetched
  not_verified,    // 1: verify only: the file in place is missing or does not verify
};
// A file here that cannot be opened, made or written is util::FileRefusal's (from the errno), as for every file.
std::string_view reason_name(FileFailure f);
ExitCode exit_code(FileFailure f);

struct JobResult {
  std::string path;
  Outcome outcome = Outcome::failed;
  std::uint64_t bytes_transferred = 0;  // body bytes received in this run
  std::uint64_t resumed_from = 0;       // bytes of a partial file kept from before
  std::string sha256;                   // computed (present / downloaded / mismatch)
  std::string git_oid;                  // computed when expected
  bool from_stamp = false;              // present: vouched for by its verified stamp, not read
  Mismatch mismatch = Mismatch::none;   // mismatch: which check failed
  std::string message;                  // mismatch or failure: one sentence
  fs::path rejected;                    // where a mismatch was kept
  // mismatch or failure: why (a FileFailure, or the source's own refusal: hub::HubRefusal); its code()
  // is the exit code.
  std::optional<ReasonId> reason;
  std::string warning;  // what went wrong without failing it (a stamp not written)
  // The source it was asked of (Options::source, as the caller names it): for `downloaded`, the one that
  // served it. Empty when the caller names none.
  std::string source;
};

// Progress and events, for the tool's display. Called on the loop's thread.
class Observer {
 public:
  virtual ~Observer() = default;
  // `ranges`: how many byte ranges the file is fetched in (1: one stream).
  virtual void on_start(const Job&, std::uint64_t /*resume_from*/, std::size_t /*ranges*/) {}
  virtual void on_progress(const Job&, std::uint64_t /*have*/) {}
  virtual void on_retry(const Job&, const std::string& /*why*/, double /*delay_s*/) {}
  // The file starts over (server ignored the range; an old copy was wrong).
  virtual void on_restart(const Job&, const std::string& /*why*/) {}
  virtual void on_finish(const Job&, const JobResult&) {}
};

struct Options {
  http::Options http;
  int max_parallel = 1;  // files transferred at once
  // Files of at least 2 x min_split_size are fetched as byte ranges of at
  // least that size over up to `connections` connections at once.
  int connections = 8;
  std::uint64_t min_split_size = 16ull << 20;
  // Where the jobs are asked (hub: the endpoint or a mirror's URL), copied into each JobResult::source.
  std::string source;
};

class Downloader {
 public:
  // `source` resolves the jobs' files and decides where the token goes and
  // what a refusal means; it must outlive the Downloader.
  Downloader(Options options, download::Source& source) : options_(std::move(options)), source_(source) {}
  // Results in the order of `jobs`. Throws provkit::Error only for local
  // failures that make going on pointless (disk full, unwritable directory).
  std::vector<JobResult> run(const JobList& jobs, Observer& observer);
  // The same for jobs already made (a few: a wheel, a URL).
  std::vector<JobResult> run(const std::vector<Job>& jobs, Observer& observer);

 private:
  Options options_;
  download::Source& source_;
};

// ---- assembly -----------------------------------------------------------------

struct AssembleJob {
  fs::path output;
  std::vector<fs::path> parts;  // in order
  std::optional<std::string> sha256;
  std::optional<std::uint64_t> size;
  fs::path stamp;  // remembers the inputs and output of the last assembly
  // The output and the stamp lie below it (opened without following links);
  // empty: their nearest common directory.
  fs::path root;
};

// refused: a part past the first is a whole GGUF file (a gguf-split set, not byte-split pieces); nothing written.
enum class AssembleOutcome { assembled, unchanged, mismatch, refused };

struct AssembleResult {
  AssembleOutcome outcome = AssembleOutcome::assembled;
  std::string sha256;
  std::uint64_t size = 0;
  Mismatch mismatch = Mismatch::none;  // mismatch: size or sha256
  std::string message;
  fs::path rejected;
  std::string warning;  // the stamp could not be written: assembled all the same
};

// Concatenates the parts into a temporary beside `output` (hashing on the
// way), checks size/sha256 when given, renames it into place and writes the
// stamp. Does nothing when the stamp matches the parts and output as they are.
// Refuses (writing nothing) when a part after the first begins as a GGUF file:
// byte-split pieces never do, gguf-split parts always do.
AssembleResult assemble(const AssembleJob& job);

// hf-fetch's JSON fields of a finished job: size, bytes_transferred, sha256 when known, and by outcome
// verified_by (present), rejected and expected_sha256 (mismatch), exit_code (failed).
nlohmann::json to_json(const Job& job, const JobResult& r);
// Of an assembly: size, sha256, and rejected for a mismatch.
nlohmann::json to_json(const AssembleResult& r);

}  // namespace provkit::download
