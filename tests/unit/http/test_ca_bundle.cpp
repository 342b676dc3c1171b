// The CA bundle the session hands libcurl: found as curl finds it, so the
// release archive's Debian libcurl verifies TLS also on RHEL-family hosts.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "http/ca_bundle.hpp"

using namespace provkit::http;

namespace {
struct Host {
  std::map<std::string, std::string> env;
  std::set<std::string> files;
  std::optional<CaLocation> find() const {
    return find_ca_location(
        [&](const char* name) -> std::optional<std::string> {
          auto it = env.find(name);
          if (it == env.end()) return std::nullopt;
          return it->second;
        },
        [&](const std::string& path) { return files.count(path) > 0; });
  }
};
}  // namespace

TEST_CASE("the CA bundle is the first of curl's paths the host has", "[http][ca]") {
  Host debian{{}, {"/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"}};
  CHECK(debian.find() == CaLocation{"/etc/ssl/certs/ca-certificates.crt", ""});
  Host rhel{{}, {"/etc/pki/tls/certs/ca-bundle.crt", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"}};
  CHECK(rhel.find() == CaLocation{"/etc/pki/tls/certs/ca-bundle.crt", ""});
  Host suse{{}, {"/etc/ssl/ca-bundle.pem"}};
  CHECK(suse.find() == CaLocation{"/etc/ssl/ca-bundle.pem", ""});
  Host alpine{{}, {"/etc/ssl/cert.pem"}};
  CHECK(alpine.find() == CaLocation{"/etc/ssl/cert.pem", ""});
  // None: libcurl keeps its built-in default.
  CHECK_FALSE(Host{}.find());
}

TEST_CASE("CURL_CA_BUNDLE, SSL_CERT_FILE and SSL_CERT_DIR override the search as in curl", "[http][ca]") {
  std::set<std::string> files{"/etc/ssl/certs/ca-certificates.crt"};
  CHECK(Host{{{"CURL_CA_BUNDLE", "/opt/ca.pem"}, {"SSL_CERT_FILE", "/x.pem"}}, files}.find() ==
        CaLocation{"/opt/ca.pem", ""});
  CHECK(Host{{{"SSL_CERT_FILE", "/x.pem"}}, files}.find() == CaLocation{"/x.pem", ""});
  CHECK(Host{{{"SSL_CERT_DIR", "/certs"}}, files}.find() == CaLocation{"", "/certs"});
  CHECK(Host{{{"SSL_CERT_DIR", "/certs"}, {"SSL_CERT_FILE", "/x.pem"}}, files}.find() ==
        CaLocation{"/x.pem", "/certs"});
  // A set variable wins even where its file is missing (libcurl's error then names it);
  // an empty one counts as unset.
  CHECK(Host{{{"CURL_CA_BUNDLE", "/missing.pem"}}, {}}.find() == CaLocation{"/missing.pem", ""});
  CHECK(Host{{{"CURL_CA_BUNDLE", ""}}, files}.find() == CaLocation{"/etc/ssl/certs/ca-certificates.crt", ""});
}
