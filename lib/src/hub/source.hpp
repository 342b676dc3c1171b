#pragma once
// The Hub as the download engine's source: a file is asked at its resolve
// URL, which redirects to a signed CDN URL; a 403/410 from the CDN means
// that URL expired (about an hour) and the file is resolved again; the token
// goes only to the Hub's own origin; a refusal is told as hub_error tells it.
#include <string>

#include "provkit/download/source.hpp"
#include "provkit/hub/client.hpp"

namespace provkit::hub {

class HubSource : public download::Source {
 public:
  // `repo`: for the sentences of refused answers; `token`: empty for none.
  HubSource(Repo repo, Token token)
      : repo_(std::move(repo)), token_(std::move(token.value)), token_source_(std::move(token.source)) {
    if (!token_.empty() && token_source_.empty()) token_source_ = "the caller";
  }

  // The job's URL, built by resolve_url.
  std::string resolve(const download::Job& job) override;
  // A 403/410 from another origin than the resolve URL's (the CDN, after the
  // Hub's redirect), or from the CDN URL a range reused directly.
  bool expired(const http::Result& res, const std::string& asked, const std::string& resolved) const override;
  std::string expired_note(const http::Result& res) const override;
  std::string bearer_token(const std::string& resolved, const std::string& url) const override;
  Error refusal(const download::Job& job, const http::Response& response) const override;

 private:
  Repo repo_;
  std::string token_, token_source_;
};

}  // namespace provkit::hub
