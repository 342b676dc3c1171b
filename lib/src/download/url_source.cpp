#include "provkit/download/url_source.hpp"

#include "provkit/http/token.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::download {

namespace {

// The last part of the URL's path, for the engine's trace and the observer.
std::string file_name(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  auto slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.empty() ? http::redact_url(url) : http::percent_decode(name);
}

}  // namespace

std::string UrlSource::expired_note(const http::Result& res) const {
  // expired() is never true: nothing to explain beyond the status.
  return "HTTP " + std::to_string(res.response.status);
}

std::string UrlSource::bearer_token(const std::string& /*resolved*/, const std::string& url) const {
  if (token_.empty()) return {};
  return http::token_allowed(token_origin_, url) ? token_ : std::string();
}

Error UrlSource::refusal(const Job& job, const http::Response& response) const {
  return refusal(job.url, response.status);
}

Error UrlSource::refusal(const std::string& url, long status) const {
  const std::string where = http::redact_url(url) + ": ";
  const std::string http_status = "HTTP " + std::to_string(status);
  if (status == 401 || status == 403)
    return Error(FileFailure::access_refused, where + "access refused (" + http_status + ")" +
                                                  (token_.empty() ? std::string() : " with the token given"));
  if (status == 404 || status == 410) return Error(FileFailure::not_found, where + "not found (" + http_status + ")");
  return Error(FileFailure::server_error, where + "the server answered " + http_status);
}

std::uint64_t UrlSource::size_of(const std::string& url, const http::Options& options) const {
  http::Session session(options);
  http::Transfer t;
  t.request.url = url;
  t.request.range_from = 0;
  t.request.range_to = 0;
  t.before_attempt = [&](http::Request& req) { req.bearer_token = bearer_token(url, req.url); };
  std::optional<http::Hop> head;
  t.on_head = [&](const http::Hop& hop) {
    head = hop;
    throw http::Abort("size read from the answer's head");  // the body is not wanted
  };
  http::Result result;
  t.on_done = [&](http::Result& r) { result = std::move(r); };
  session.add(std::move(t));
  session.run();
  const std::string where = http::redact_url(url) + ": ";
  if (head && result.failure == http::FailureKind::aborted) {
    std::uint64_t size = 0;
    if (head->status == 206) {
      auto cr = http::parse_content_range(head->headers.get("content-range").value_or(""));
      if (cr && cr->total) size = *cr->total;
      else head.reset();
    } else if (!util::parse_u64(util::trim(head->headers.get("content-length").value_or("")), size)) {
      head.reset();
    }
    if (!head)
      throw Error(FileFailure::no_size, where + "the server states no size (no Content-Range total or Content-Length)");
    util::log::debug("download", [&] {
      return where + std::to_string(size) + " bytes, as the answer to a request for its first byte says";
    });
    return size;
  }
  if (result.failure != http::FailureKind::none) throw Error(FileFailure::network, where + result.message);
  if (result.response.status == 416) {  // no first byte: an empty file says its size as "bytes */0"
    auto cr = http::parse_content_range(result.response.headers.get("content-range").value_or(""));
    if (cr && cr->total) return *cr->total;
    if (auto total = result.response.headers.get("content-range"); total && util::trim(*total) == "bytes */0") return 0;
  }
  throw refusal(url, result.response.status);
}

std::string fetch_url_file(const UrlFile& file, const Options& options, UrlSource& source, Observer& observer) {
  Job job;
  job.spec.path = file_name(file.url);
  job.spec.size = file.size ? *file.size : source.size_of(file.url, options.http);
  job.spec.sha256 = file.sha256;
  job.url = file.url;
  job.final_path = file.final_path;
  job.partial_path = file.partial_path;
  job.rejected_prefix = file.partial_path;
  job.lock_path = file.lock_path;
  job.root = file.root;
  std::vector<JobResult> results = Downloader(options, source).run({job}, observer);
  const JobResult& r = results.at(0);
  const std::string where = http::redact_url(file.url) + ": ";
  const std::string expected = "the download is not what was expected (size " + std::to_string(job.spec.size) +
                               " bytes" + (file.sha256 ? ", sha256 " + *file.sha256 : std::string()) + "): ";
  switch (r.outcome) {
    case Outcome::present:
    case Outcome::downloaded: return r.sha256;
    case Outcome::mismatch: {
      // Nothing of a wrong file stays: the engine's copy kept aside goes too.
      if (!r.rejected.empty()) util::Root(job.root.empty() ? r.rejected.parent_path() : job.root).remove(r.rejected);
      throw Error(FileFailure::mismatch, where + expected + util::lower(download::mismatch_name(r.mismatch)) +
                                             " (got sha256 " + r.sha256 + "); removed");
    }
    case Outcome::failed: break;
  }
  // The source's refusals name the URL already; the engine's own failures
  // (too many bytes, another total) are about what was expected.
  std::string message = r.message;
  const ReasonId reason = r.reason.value_or(FileFailure::network);
  if (message.rfind(where, 0) != 0)
    message = where + (reason.code() == ExitCode::check_failed ? expected : "") + message;
  throw Error(reason, message);
}

}  // namespace provkit::download
