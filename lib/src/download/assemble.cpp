// Assembly of split parts into one file (see fetch.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "provkit/download/io.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/fd.hpp"

namespace provkit::download {

using download::io_error;
using download::make_parent;
using download::write_all;

namespace {
constexpr std::size_t kReadBuffer = 4 * 1024 * 1024;
// The state the stamp remembers: each part's and the output's size, mtime
// and inode, and what the output must be.
std::string describe_state(const AssembleJob& job) {
  auto stat_line = [](const char* kind, const fs::path& p) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return std::string(kind) + " missing " + p.string() + "\n";
    return std::string(kind) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino) + " " + p.string() + "\n";
  };
  std::string s = "provkit-assemble 1\n";
  for (const auto& p : job.parts) s += stat_line("part", p);
  s += stat_line("output", job.output);
  s += "expect " + job.sha256.value_or("-") + " " + (job.size ? std::to_string(*job.size) : "-") + "\n";
  return s;
}
}  // namespace

AssembleResult assemble(const AssembleJob& job) {
  AssembleResult r;
  std::error_code ec;
  if (fs::exists(job.output, ec) && fs::exists(job.stamp, ec)) {
    std::string stamp;
    try {
      stamp = util::read_file(job.stamp);
    } catch (const Error&) {
    }
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

  make_parent(job.output);
  fs::path tmp = util::temp_path_beside(job.output, "assemble");
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) io_error(tmp, "cannot create");
  util::Hasher sha(util::DigestKind::sha256);
  std::unique_ptr<char[]> buf(new char[kReadBuffer]);
  try {
    for (const auto& part : job.parts) {
      int in = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
      if (in < 0) io_error(part, "cannot open part");
      ::posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
      try {
        r.size += util::read_blocks(in, {buf.get(), kReadBuffer}, [&](const char* data, std::size_t n) {
          sha.update(data, n);
          write_all(out, data, n, tmp);
        }, part.string());
      } catch (...) {
        ::close(in);
        throw;
      }
      ::close(in);
    }
    if (::fsync(out) != 0) io_error(tmp, "cannot fsync");
  } catch (...) {
    ::close(out);
    fs::remove(tmp, ec);
    throw;
  }
  ::close(out);
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
    r.rejected = util::path_with_suffix(job.output, ".bad-" + r.sha256);
    util::rename_durable(tmp, r.rejected);
    r.message = problem + "; the assembled bytes are kept at " + r.rejected.string();
    return r;
  }
  util::rename_durable(tmp, job.output);
  util::write_file_atomic(job.stamp, describe_state(job) + "result " + r.sha256 + " " + std::to_string(r.size) + "\n");
  r.outcome = AssembleOutcome::assembled;
  return r;
}

}  // namespace provkit::download
