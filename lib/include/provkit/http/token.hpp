#pragma once
// Where a bearer token may go: only to the origin (scheme, host, port) it was
// issued for, never after a redirect to another origin. The one place that
// decides it; the client's redirect hops, the download engine and the Hub
// client all ask here.
#include <string_view>

namespace provkit::http {

// Same scheme, host and port; false when either does not parse.
bool same_origin(std::string_view a, std::string_view b);

// True when `url` has the origin of `token_origin` (a URL of the origin the
// token was issued for); false when either does not parse.
bool token_allowed(std::string_view token_origin, std::string_view url);

}  // namespace provkit::http
