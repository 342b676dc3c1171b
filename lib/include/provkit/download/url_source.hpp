#pragma once
// A file at a plain URL (a wheel on a package index, an interpreter archive)
// as the download engine's source, and one such file fetched through the
// engine. No Hub rules: the job's URL is asked as it is, redirects are
// followed, nothing expires (a refused answer is a refusal), the token (if
// any) goes only where http::token_allowed lets it, and a refusal is typed by
// its status: 401/403 auth, 404/410 check_failed (the file is not there),
// anything else network.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "provkit/download/downloader.hpp"
#include "provkit/download/source.hpp"

namespace provkit::download {

class UrlSource : public Source {
 public:
  UrlSource() = default;
  // `token` is sent only to the origin of `token_origin` (a URL of it).
  UrlSource(std::string token, std::string token_origin)
      : token_(std::move(token)), token_origin_(std::move(token_origin)) {}

  std::string resolve(const Job& job) override { return job.url; }
  bool expired(const http::Result&, const std::string&, const std::string&) const override { return false; }
  std::string expired_note(const http::Result& res) const override;
  std::string bearer_token(const std::string& resolved, const std::string& url) const override;
  Error refusal(const Job& job, const http::Response& response) const override;
  // The same for an answer to `url` outside a job (size_of's).
  Error refusal(const std::string& url, long status) const;

  // The file's size, for a job whose size nothing stated (an index without
  // sizes, an interpreter archive): one GET of its first byte (Range:
  // bytes=0-0), abandoned at the answer's head, read from Content-Range's
  // total (206, or 416 for an empty file) or Content-Length (200: the
  // server ignores ranges). A GET rather than a HEAD because servers that
  // answer HEAD with 405/501 (a minimal index server) would cost the retries
  // of a 5xx first. Retries as `options` say; a refusal as refusal() says;
  // an answer that states no size is Error(network).
  std::uint64_t size_of(const std::string& url, const http::Options& options) const;

 private:
  std::string token_, token_origin_;
};

// One file from a URL, through a Downloader on a UrlSource: resumed from its
// partial file, in ranges when large, sha256 (when given) and size checked
// before it is renamed to `final_path`.
struct UrlFile {
  std::string url;
  std::optional<std::string> sha256;  // nullopt: taken as it comes (returned)
  std::optional<std::uint64_t> size;  // nullopt: learned first with UrlSource::size_of
  std::filesystem::path final_path;
  std::filesystem::path partial_path;  // kept across runs (a failure leaves it for the next one)
  std::filesystem::path lock_path;     // flock(2)ed while it is fetched; empty: none
  std::filesystem::path root;          // every path above lies below it
};

// The sha256 of what was published at `final_path`. A failure is an Error
// with the engine's code (network, auth, check_failed), naming the URL; a
// mismatch is Error(check_failed) and its bytes are removed, not kept aside:
// nothing of a wrong file stays.
std::string fetch_url_file(const UrlFile& file, const Options& options, UrlSource& source, Observer& observer);

}  // namespace provkit::download
