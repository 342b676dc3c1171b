#pragma once
// Where the download engine gets its files from, and that source's rules:
// the engine asks a file's resolve URL, follows its redirect (to a CDN, for
// the Hub) and fetches later ranges from where it led; what an expired
// redirect target looks like, where the token may go and what a refusal
// means belong to the source. The engine knows nothing of the Hub; the Hub's
// source is hub::HubSource (lib/src/hub/source.hpp, private to hub).
#include <string>

#include "provkit/error.hpp"
#include "provkit/http/http.hpp"

namespace provkit::download {
struct Job;
}

namespace provkit::download {

class Source {
 public:
  virtual ~Source() = default;
  // The URL to ask for the job's file: at the start and again after the URL
  // it led to has expired.
  virtual std::string resolve(const download::Job& job) = 0;
  // Whether `res`, the answer to asking `asked` for a file resolved at
  // `resolved`, says that the URL the resolve led to has expired (then the
  // engine resolves again and carries on from where the file is).
  virtual bool expired(const http::Result& res, const std::string& asked, const std::string& resolved) const = 0;
  // Why the engine resolves again after `res` (for the display).
  virtual std::string expired_note(const http::Result& res) const = 0;
  // The bearer token to send with a request to `url` for a file resolved at
  // `resolved`; empty: none.
  virtual std::string bearer_token(const std::string& resolved, const std::string& url) const = 0;
  // The typed error for a refused (non-2xx, not expired) answer.
  virtual Error refusal(const download::Job& job, const http::Response& response) const = 0;
};

}  // namespace provkit::download
