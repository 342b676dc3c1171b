// Assembly of split parts into one file (see fetch.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "io.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"

namespace provkit::download {

using download::io_error;
using download::make_parent;
using download::write_all;

namespace {
constexpr std::size_t kReadBuffer = std::size_t{4} * 1024 * 1024;
constexpr std::size_t kStampMax = 1u << 20;
// The state the stamp remembers: each part's and the output's identity
// (device, inode, size, mtime and real path: the cache's spelling does not
// matter), and what the output must be.
std::string describe_state(const AssembleJob& job) {
  auto line = [](const char* kind, const fs::path& p) {
    auto id = file_identity(p);
    return std::string(kind) + " " + (id ? *id : "missing\n");
  };
  std::string s = "provkit-assemble 2\n";
  for (const auto& p : job.parts) s += line("part", p);
  s += line("output", job.output);
  s += "expect " + job.sha256.value_or("-") + " " + (job.size ? std::to_string(*job.size) : "-") + "\n";
  return s;
}
}  // namespace

AssembleResult assemble(const AssembleJob& job) {
  AssembleResult r;
  util::Root root(job.root.empty() ? util::common_directory({job.output, job.stamp}) : job.root);
  struct stat st;
  if (root.stat(job.output, st) && S_ISREG(st.st_mode)) {
    std::string stamp;
    try {
      stamp = root.read_if_present(job.stamp, kStampMax);
    } catch (const Error&) {}
    std::string state = describe_state(job);
    // Stamp = state + "result <sha256> <size>\n".
    if (stamp.starts_with(state)) {
      std::string rest = stamp.substr(state.size());
      if (rest.starts_with("result ") && rest.size() > 7 + 64) {
        r.outcome = AssembleOutcome::unchanged;
        r.sha256 = rest.substr(7, 64);
        r.size = std::stoull(rest.substr(7 + 65));
        return r;
      }
    }
  }

  util::Fd dir = root.parent(job.output, true);
  std::string tmp_name = util::temp_path_beside(job.output.filename(), "assemble").string();
  fs::path tmp = job.output.parent_path() / tmp_name;
  util::Fd out(::openat(dir.get(), tmp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out) io_error(tmp, "cannot create");
  util::Hasher sha(util::DigestKind::sha256);
  std::unique_ptr<char[]> buf(new char[kReadBuffer]);
  try {
    for (const auto& part : job.parts) {
      // The parts are the layout's own names (a snapshot's links to its blobs); regular files only.
      util::Fd in = util::open_regular(part);
      if (!in) {
        const int err = errno;
        throw Error(util::file_refusal(err), part.string() + ": cannot open part: " + util::describe_open_error(err));
      }
      ::posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
      r.size += util::read_blocks(
          in.get(), {buf.get(), kReadBuffer},
          [&](const char* data, std::size_t n) {
            sha.update(data, n);
            write_all(out.get(), data, n, tmp);
          },
          part.string());
    }
    if (::fsync(out.get()) != 0) io_error(tmp, "cannot fsync");
    if (out.close() != 0) io_error(tmp, "write error");
  } catch (...) {
    ::unlinkat(dir.get(), tmp_name.c_str(), 0);
    throw;
  }
  r.sha256 = sha.hex_digest();
  std::string problem;
  if (job.size && *job.size != r.size) {
    r.mismatch = Mismatch::size;
    problem = "size mismatch: expected " + std::to_string(*job.size) + " bytes, got " + std::to_string(r.size);
  } else if (job.sha256 && *job.sha256 != r.sha256) {
    r.mismatch = Mismatch::sha256;
    problem = "sha256 mismatch: expected " + *job.sha256 + ", got " + r.sha256;
  }
  if (!problem.empty()) {
    r.outcome = AssembleOutcome::mismatch;
    r.rejected = keep_aside(root, tmp, job.output, r.sha256);
    r.message = problem + "; the assembled bytes are kept at " + r.rejected.string();
    return r;
  }
  root.rename(tmp, job.output);
  remove_rejected(root, job.output);
  try {
    root.write_atomic(job.stamp, describe_state(job) + "result " + r.sha256 + " " + std::to_string(r.size) + "\n");
  } catch (const Error& e) {
    r.warning = std::string("the assembly stamp was not written (the next run assembles again): ") + e.what();
  }
  r.outcome = AssembleOutcome::assembled;
  return r;
}

}  // namespace provkit::download
