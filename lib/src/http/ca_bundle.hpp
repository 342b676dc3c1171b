#pragma once
// Where the host keeps its CA certificates. The release archive carries
// Debian's libcurl, whose built-in bundle path (/etc/ssl/certs/ca-certificates.crt)
// does not exist on RHEL-family hosts, so the session names the bundle itself,
// found the way curl finds it: CURL_CA_BUNDLE, else SSL_CERT_DIR and
// SSL_CERT_FILE (curl's tool), else the first of the paths curl's configure
// probes for (Debian/Ubuntu, RHEL/Fedora, openSUSE, Alpine/macOS...).
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace provkit::http {

struct CaLocation {
  std::string file;  // CURLOPT_CAINFO, empty: libcurl's default
  std::string dir;   // CURLOPT_CAPATH, empty: libcurl's default
  bool operator==(const CaLocation&) const = default;
};

// The bundle paths looked for, in order.
const std::vector<std::string>& ca_bundle_candidates();

// lookup: returns the variable's value or nullopt; exists: whether a regular
// file is there. A variable that is set wins even when its file is missing, so
// that libcurl's error names the file the user gave.
std::optional<CaLocation> find_ca_location(const std::function<std::optional<std::string>(const char*)>& lookup,
                                           const std::function<bool(const std::string&)>& exists);

// The same over this process's environment and file system, computed once.
const std::optional<CaLocation>& host_ca_location();

}  // namespace provkit::http
