// Assembly of split parts into one file (see fetch.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "io.hpp"
#include "provkit/download/downloader.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/interrupt.hpp"
#include "provkit/util/strings.hpp"

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
// The first part past the first that begins as a GGUF file does: the magic "GGUF" and a version llama.cpp
// reads (1 to 3), little-endian. A byte-split GGUF's later pieces start inside its tensor data.
const fs::path* whole_gguf_part(const AssembleJob& job) {
  for (std::size_t i = 1; i < job.parts.size(); ++i) {
    util::Fd in = util::open_regular(job.parts[i]);
    unsigned char head[8] = {};
    if (!in || ::pread(in.get(), head, sizeof head, 0) != static_cast<ssize_t>(sizeof head)) continue;
    const std::uint32_t version = head[4] | (head[5] << 8) | (head[6] << 16) | (std::uint32_t{head[7]} << 24);
    if (std::memcmp(head, "GGUF", 4) == 0 && version >= 1 && version <= 3) return &job.parts[i];
  }
  return nullptr;
}
}  // namespace

AssembleResult assemble(const AssembleJob& job) {
  AssembleResult r;
  // Before the stamp is trusted: an output joined from such parts by an earlier run is no better now.
  if (const fs::path* whole = whole_gguf_part(job)) {
    r.outcome = AssembleOutcome::refused;
    r.message = whole->filename().string() +
                " is a whole GGUF file (it begins with GGUF's magic and version), as "
                "each part of a gguf-split set is: nothing was assembled";
    return r;
  }
  util::Root root(job.root.empty() ? util::common_directory({job.output, job.stamp}) : job.root);
  struct stat st;
  if (root.stat(job.output, st) && S_ISREG(st.st_mode)) {
    std::string stamp;
    try {
      stamp = root.read_if_present(job.stamp, kStampMax);
    } catch (const Error&) {}
    std::string state = describe_state(job);
    // Stamp = state + "result <sha256> <size>\n". Anything else (a damaged or truncated stamp) vouches for
    // nothing: the output is assembled again and the stamp rewritten, never an error.
    if (stamp.starts_with(state)) {
      std::string_view rest = std::string_view(stamp).substr(state.size());
      std::uint64_t size = 0;
      if (rest.starts_with("result ") && rest.size() > 7 + 65 && rest[7 + 64] == ' ' && rest.back() == '\n' &&
          util::is_hex(rest.substr(7, 64), 64) && (!job.sha256 || *job.sha256 == rest.substr(7, 64)) &&
          util::parse_u64(rest.substr(7 + 65, rest.size() - 7 - 65 - 1), size) && (!job.size || *job.size == size)) {
        r.outcome = AssembleOutcome::unchanged;
        r.sha256 = rest.substr(7, 64);
        r.size = size;
        return r;
      }
    }
  }

  util::Fd dir = root.parent(job.output, true);
  // "<output>.assemble-PID-N", locked while this run lives: removed on a signal (the tool's handler) or
  // when this throws, and by the next run when the process was killed outright (sweep_temporaries).
  util::Temporary tmp(dir.get(), job.output.parent_path(), job.output.filename().string(), "assemble",
                      util::Temporary::Kind::file);
  util::Hasher sha(util::DigestKind::sha256);
  std::unique_ptr<char[]> buf(new char[kReadBuffer]);
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
          write_all(tmp.fd(), data, n, tmp.path());
        },
        part.string());
  }
  if (::fsync(tmp.fd()) != 0) io_error(tmp.path(), "cannot fsync");
  if (tmp.close() != 0) io_error(tmp.path(), "write error");
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
    tmp.commit([&] { r.rejected = keep_aside(root, tmp.path(), job.output, r.sha256); });
    r.message = problem + "; the assembled bytes are kept at " + r.rejected.string();
    return r;
  }
  tmp.commit([&] { root.rename(tmp.path(), job.output); });  // a rename that fails leaves nothing behind
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
