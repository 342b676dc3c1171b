#include "ca_bundle.hpp"

#include "provkit/util/environment.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace provkit::http {

const std::vector<std::string>& ca_bundle_candidates() {
  // curl's configure (--with-ca-bundle auto-detection) and Go's crypto/x509 list.
  static const std::vector<std::string> paths = {
      "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Gentoo, Arch
      "/etc/pki/tls/certs/ca-bundle.crt",                   // RHEL, Fedora, CentOS, Rocky, Alma
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL 7+ (what the above links to)
      "/etc/ssl/ca-bundle.pem",                             // openSUSE, SLES
      "/etc/pki/tls/cacert.pem",                            // OpenELEC
      "/usr/share/ssl/certs/ca-bundle.crt",                 // old Red Hat
      "/usr/local/share/certs/ca-root-nss.crt",             // FreeBSD
      "/etc/ssl/cert.pem",                                  // Alpine, macOS, OpenBSD
  };
  return paths;
}

std::optional<CaLocation> find_ca_location(const std::function<std::optional<std::string>(const char*)>& lookup,
                                           const std::function<bool(const std::string&)>& exists) {
  auto set = [&](const char* name) -> std::optional<std::string> {
    auto v = lookup(name);
    if (v && v->empty()) return std::nullopt;
    return v;
  };
  if (auto bundle = set("CURL_CA_BUNDLE")) return CaLocation{*bundle, ""};
  auto dir = set("SSL_CERT_DIR");
  auto file = set("SSL_CERT_FILE");
  if (dir || file) return CaLocation{file.value_or(""), dir.value_or("")};
  for (const auto& path : ca_bundle_candidates())
    if (exists(path)) return CaLocation{path, ""};
  return std::nullopt;
}

const std::optional<CaLocation>& host_ca_location() {
  static const std::optional<CaLocation> location =
      find_ca_location([](const char* name) { return util::env_get(util::env_by_name(name)); },
                       [](const std::string& path) {
                         std::error_code ec;
                         return std::filesystem::is_regular_file(path, ec);
                       });
  return location;
}

}  // namespace provkit::http
