#include "provkit/http/token.hpp"

#include "provkit/http/http.hpp"

namespace provkit::http {

bool same_origin(std::string_view a, std::string_view b) {
  auto x = Url::parse(a);
  auto y = Url::parse(b);
  return x && y && x->origin() == y->origin();
}

bool token_allowed(std::string_view token_origin, std::string_view url) { return same_origin(token_origin, url); }

}  // namespace provkit::http
