#include "source.hpp"

#include "provkit/download/downloader.hpp"
#include "provkit/http/token.hpp"

namespace provkit::hub {

std::string HubSource::resolve(const download::Job& job) { return job.url; }

bool HubSource::expired(const http::Result& res, const std::string& asked, const std::string& resolved) const {
  if (res.failure != http::FailureKind::none) return false;
  if (res.response.status != 403 && res.response.status != 410) return false;
  auto hub = http::Url::parse(resolved);
  auto last = http::Url::parse(res.response.url);
  auto first = http::Url::parse(asked);
  return hub && last && first && (last->origin() != hub->origin() || first->origin() != hub->origin());
}

std::string HubSource::expired_note(const http::Result& res) const {
  return "the CDN URL was refused (HTTP " + std::to_string(res.response.status) +
         "), most likely expired; resolving it again through the Hub";
}

std::string HubSource::bearer_token(const std::string& resolved, const std::string& url) const {
  return http::token_allowed(resolved, url) ? token_ : std::string();
}

Error HubSource::refusal(const download::Job& job, const http::Response& response) const {
  return hub_error(repo_, job.spec.path, response.status, response.headers, token_source_);
}

}  // namespace provkit::hub
