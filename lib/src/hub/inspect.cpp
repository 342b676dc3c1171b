#include "provkit/hub/inspect.hpp"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "provkit/error.hpp"
#include "provkit/http/http.hpp"
#include "provkit/hub/patterns.hpp"
#include "provkit/hub/snapshot.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"

namespace provkit::hub {

namespace {

namespace fs = std::filesystem;
using checkpoint::FileHeader;
using checkpoint::Format;

// Reads every file of `files` with `read` (header files by their header,
// sidecars whole), `jobs` at once, and builds the report. An `assemble` entry
// whose output is a checkpoint file is read as that file, its bytes taken
// from its parts in order (the header lies in the first part's leading bytes);
// the parts themselves are then not read, and are listed with why.
checkpoint::Report read_all(
    const std::vector<InspectFile>& files, const InspectOptions& o,
    const std::function<std::string(const std::string&, std::uint64_t, std::uint64_t)>& read_part,
    const std::function<std::string(const InspectFile&)>& read_whole, const std::vector<AssembleEntry>& assemble = {}) {
  struct Job {
    InspectFile file;
    bool header = false;
    Format format{};
  };
  std::map<std::string, std::uint64_t> size_of;
  for (const auto& f : files) size_of[f.path] = f.size;
  std::map<std::string, const AssembleEntry*> assembled;  // output -> its entry
  std::map<std::string, std::string> part_of;             // part -> output
  std::vector<InspectFile> all = files;
  std::vector<checkpoint::NotRead> not_read;
  // Sizes from a listing or a manifest: totals that cannot be represented are refused, naming the file.
  util::CheckedSum listed("the sizes of the files listed");
  for (const auto& f : files) listed.add(f.size, f.path);
  for (const auto& a : assemble) {
    if (!checkpoint::is_checkpoint_name(a.output) || size_of.count(a.output)) continue;
    util::CheckedSum size("the sizes of the parts of " + a.output);
    bool whole = true;
    for (const auto& p : a.parts) {
      auto it = size_of.find(p);
      if (it == size_of.end()) whole = false;
      else size.add(it->second, p);
    }
    if (!whole) continue;  // Manifest::parse names only its own files; a caller's list may lack one
    assembled[a.output] = &a;
    for (const auto& p : a.parts) part_of[p] = a.output;
    all.push_back({a.output, size.value()});
    util::log::debug("hub", [&] {
      return "inspect: " + a.output + " read from its " + std::to_string(a.parts.size()) + " parts (" +
             std::to_string(size.value()) + " bytes)";
    });
  }
  // [at, at + n) of a file, or of an assembled one across its parts.
  auto read_at = [&](const std::string& path, std::uint64_t at, std::uint64_t n) {
    auto a = assembled.find(path);
    if (a == assembled.end()) return read_part(path, at, n);
    std::string out;
    std::uint64_t base = 0;
    for (const auto& p : a->second->parts) {
      std::uint64_t size = size_of.at(p);
      if (at + out.size() < base + size && out.size() < n) {
        std::uint64_t from = at + out.size() - base;
        out += read_part(p, from, std::min<std::uint64_t>(n - out.size(), size - from));
      }
      base += size;
    }
    return out;
  };
  std::vector<Job> jobs;
  std::set<std::string> left_out;
  for (const auto& f : all) {
    Job j{f};
    if (auto p = part_of.find(f.path); p != part_of.end()) {
      not_read.push_back({f.path, f.size, "a part of " + p->second + ", read as that file"});
      continue;
    }
    if (checkpoint::is_checkpoint_name(f.path, &j.format)) j.header = true;
    else if (!checkpoint::is_sidecar_name(f.path)) {
      not_read.push_back({f.path, f.size, "not a safetensors or GGUF file"});
      continue;
    }
    if (!selected_by_patterns(f.path, o.include, o.exclude)) {
      if (j.header) left_out.insert(f.path);
      not_read.push_back({f.path, f.size, "left out by the include/exclude globs"});
      continue;
    }
    jobs.push_back(std::move(j));
  }
  std::vector<FileHeader> headers;
  checkpoint::Sidecars sidecars;
  std::mutex mutex;
  std::atomic<std::uint64_t> transferred{0};
  util::ByteBudget budget(o.header_budget);
  util::parallel_for(jobs.size(), o.jobs, [&](std::size_t i) {
    const Job& j = jobs[i];
    if (j.header) {
      struct Release {
        util::ByteBudget& b;
        std::size_t i;
        ~Release() { b.release(i); }
      } release{budget, i};
      std::uint64_t got = 0;
      auto h = checkpoint::read_header(
          j.file.path, j.format, j.file.size,
          [&](std::uint64_t at, std::uint64_t n) {
            budget.acquire(i, n);  // the header grows by n bytes
            return read_at(j.file.path, at, n);
          },
          &got);
      transferred += got;
      std::lock_guard lock(mutex);
      headers.push_back(std::move(h));
    } else {
      if (j.file.size > (64u << 20))
        throw input_error(j.file.path, 0, "is " + std::to_string(j.file.size) + " bytes, too large for a JSON sidecar");
      std::string text = read_whole(j.file);
      transferred += text.size();
      std::lock_guard lock(mutex);
      sidecars[j.file.path] = std::move(text);
    }
  });
  auto report = checkpoint::make_report(std::move(headers), sidecars, o.fit, left_out);
  std::sort(not_read.begin(), not_read.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  report.not_read = std::move(not_read);
  report.listed_bytes = listed.value();
  report.transferred = transferred;
  report.header_bytes_peak = budget.peak();
  return report;
}

// Sessions kept between range requests, one per worker at a time, so that
// their connections (to the Hub and to the CDN) are reused.
class SessionPool {
 public:
  explicit SessionPool(http::Options options) : options_(std::move(options)) {}
  std::unique_ptr<http::Session> take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return std::make_unique<http::Session>(options_);
    auto s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  void give(std::unique_ptr<http::Session> s) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(s));
  }

 private:
  http::Options options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<http::Session>> free_;
};

// One Range request for [at, at + n) of a file of the repo, through the
// session's redirects, token rule and retries. A server that ignores the
// Range (200, whole file) is read only up to the bytes wanted.
std::string read_range(const HubClient& client, SessionPool& pool, const Repo& repo, const std::string& commit,
                       const std::string& path, std::uint64_t at, std::uint64_t n, std::atomic<std::uint64_t>& extra) {
  std::uint64_t received = 0;
  auto session = pool.take();
  http::Transfer t;
  t.request.url = resolve_url(client.endpoint(), repo, commit, path);
  t.request.bearer_token = client.token();  // the client sends it to the Hub's origin only
  t.request.range_from = at;
  t.request.range_to = at + n - 1;
  std::string body;
  std::uint64_t skip = 0;  // bytes before `at` still to drop (a 200 answer)
  bool enough = false;
  http::Result result;
  t.on_head = [&](const http::Hop& hop) {
    body.clear();
    enough = false;
    skip = 0;
    if (hop.status == 206) {
      auto cr = http::parse_content_range(hop.headers.get("content-range").value_or(""));
      if (!cr || cr->first != at) throw http::Abort("the answer to a range request starts at another byte");
    } else {
      skip = at;
    }
  };
  t.on_body = [&](const char* d, std::size_t len) {
    received += len;
    std::uint64_t drop = std::min<std::uint64_t>(skip, len);
    skip -= drop;
    d += drop;
    len -= drop;
    std::uint64_t take = std::min<std::uint64_t>(len, n - body.size());
    body.append(d, take);
    if (body.size() == n && (take < len || skip == 0)) {
      enough = true;
      if (take < len) throw http::Abort("the server sent more than the range asked for");
    }
  };
  t.on_done = [&](http::Result& r) { result = std::move(r); };
  session->add(std::move(t));
  session->run();  // an exception here drops the session with the transfer it may still hold
  pool.give(std::move(session));
  extra += received - std::min<std::uint64_t>(received, body.size());
  if (enough && body.size() == n) return body;
  if (result.failure != http::FailureKind::none) throw Error(ExitCode::network, result.message);
  if (!result.ok())
    throw hub_error(repo, path + " at " + commit, result.response.status, result.response.headers,
                    client.token_source());
  if (body.size() != n)
    throw Error(ExitCode::network, util::printable(path) + ": the Hub sent " + std::to_string(body.size()) +
                                       " of the " + std::to_string(n) + " bytes asked for");
  return body;
}

}  // namespace

checkpoint::Report inspect_files(HubClient& client, const Repo& repo, const std::string& commit,
                                 const std::vector<InspectFile>& files, const InspectOptions& options,
                                 const std::vector<AssembleEntry>& assemble) {
  std::atomic<std::uint64_t> extra{0};
  SessionPool pool(client.options());
  auto report = read_all(
      files, options,
      [&](const std::string& path, std::uint64_t at, std::uint64_t n) {
        return read_range(client, pool, repo, commit, path, at, n, extra);
      },
      [&](const InspectFile& f) { return client.download_small(repo, commit, f.path); }, assemble);
  report.repo = repo.id;
  report.revision = commit;
  // What came over the wire: the bytes of an answer that ignored the Range count too.
  report.transferred += extra;
  return report;
}

checkpoint::Report inspect_repo(HubClient& client, const Repo& repo, const std::string& revision,
                                const InspectOptions& options) {
  std::string commit = client.resolve_commit(repo, revision);
  std::vector<InspectFile> files;
  for (const auto& e : client.list_tree(repo, commit))
    if (e.is_file()) files.push_back({e.path, e.content_size()});
  return inspect_files(client, repo, commit, files, options);
}

checkpoint::Report inspect_manifest(HubClient& client, const Manifest& manifest, const InspectOptions& options) {
  std::vector<InspectFile> files;
  for (const auto& f : manifest.files) files.push_back({f.path, f.size});
  return inspect_files(client, manifest.repo, manifest.revision, files, options, manifest.assemble);
}

checkpoint::Report inspect_paths(const std::vector<fs::path>& paths, const InspectOptions& options) {
  std::vector<InspectFile> files;
  std::map<std::string, fs::path> where;  // report path -> file on disk
  for (const auto& arg : paths)
    for (auto& f : checkpoint::list_local(arg)) {
      files.push_back({f.path, f.size});
      where[f.path] = std::move(f.where);
    }
  return read_all(
      files, options,
      [&](const std::string& path, std::uint64_t at, std::uint64_t n) {
        return checkpoint::read_local(where.at(path), at, n);
      },
      [&](const InspectFile& f) { return util::read_file(where.at(f.path)); });
}

}  // namespace provkit::hub
