#include "provkit/wheels/index.hpp"

#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>

#include "provkit/download/url_source.hpp"
#include "provkit/error.hpp"
#include "provkit/http/http.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/json.hpp"

namespace provkit::wheels {

using namespace pyspec;

namespace {

void copy_file_contents_to(const fs::path& from, const fs::path& to) {
  auto tmp = util::temp_path_beside(to);
  fs::copy_file(from, tmp);
  util::rename_durable(tmp, to);
}

std::string html_unescape(std::string s) {
  static const std::pair<const char*, const char*> entities[] = {{"&amp;", "&"},   {"&lt;", "<"},  {"&gt;", ">"},
                                                                 {"&quot;", "\""}, {"&#39;", "'"}, {"&#x27;", "'"}};
  for (auto [from, to] : entities)
    for (std::size_t pos; (pos = s.find(from)) != std::string::npos;) s.replace(pos, std::strlen(from), to);
  return s;
}

// The value of attribute `name` inside one tag's text, or nullopt.
std::optional<std::string> attribute(const std::string& tag, const std::string& name) {
  std::size_t pos = 0;
  while ((pos = tag.find(name, pos)) != std::string::npos) {
    bool boundary = pos > 0 && std::isspace(static_cast<unsigned char>(tag[pos - 1]));
    std::size_t i = pos + name.size();
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    if (!boundary || i >= tag.size() || tag[i] != '=') {
      pos += name.size();
      continue;
    }
    ++i;
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    if (i < tag.size() && (tag[i] == '"' || tag[i] == '\'')) {
      auto end = tag.find(tag[i], i + 1);
      if (end == std::string::npos) return std::nullopt;
      return html_unescape(tag.substr(i + 1, end - i - 1));
    }
    auto end = tag.find_first_of(" \t\r\n>", i);
    return html_unescape(tag.substr(i, end == std::string::npos ? std::string::npos : end - i));
  }
  return std::nullopt;
}

void add_candidate(std::vector<WheelCandidate>& out, const std::string& filename, const std::string& url,
                   const std::string& sha256, std::optional<std::uint64_t> size) {
  auto wn = parse_wheel_name(filename);
  if (!wn) return;  // sdists and other files: envbuild installs wheels only
  WheelCandidate c;
  c.wheel = *wn;
  c.url = url;
  c.sha256 = sha256;
  c.size = size;
  out.push_back(std::move(c));
}

// `url` into the cache at `target` through the download engine (what hf-fetch fetches with): resumed from
// tmp/<name>.partial after a failure or a kill, in byte ranges when large, sha256 (when known) and size
// checked before the rename; a size nothing stated is learned from the server first. Returns the sha256.
std::string fetch_into_cache(const std::string& url, std::optional<std::string> sha256,
                             std::optional<std::uint64_t> size, const fs::path& target, WheelCache& cache,
                             download::Observer& observer) {
  download::UrlFile file;
  file.url = url;
  file.sha256 = std::move(sha256);
  file.size = size;
  file.final_path = target;
  file.partial_path = cache.root() / "tmp" / (target.filename().string() + ".partial");
  file.lock_path = cache.root() / "locks" / (target.filename().string() + ".lock");
  file.root = cache.root();
  download::UrlSource source;
  return download::fetch_url_file(file, download::Options{}, source, observer);
}

}  // namespace

std::vector<WheelCandidate> parse_simple_page(const std::string& body, const std::string& content_type,
                                              const std::string& page_url) {
  std::vector<WheelCandidate> out;
  if (content_type.find("json") != std::string::npos) {
    auto parsed = util::read_json(body);
    if (auto* e = std::get_if<util::JsonError>(&parsed))
      throw Error(ExitCode::network, http::redact_url(page_url) + ": index answered invalid JSON: " + e->why);
    nlohmann::json j = std::move(std::get<nlohmann::json>(parsed));
    for (auto& f : j.value("files", nlohmann::json::array())) {
      std::string filename = f.value("filename", "");
      std::string url = http::resolve_reference(page_url, f.value("url", ""));
      std::string sha;
      if (f.contains("hashes") && f["hashes"].contains("sha256")) sha = f["hashes"]["sha256"].get<std::string>();
      std::optional<std::uint64_t> size;
      if (f.contains("size") && f["size"].is_number_unsigned()) size = f["size"].get<std::uint64_t>();
      add_candidate(out, filename, url, sha, size);
    }
    return out;
  }
  // PEP 503 HTML: <a href="URL#sha256=HEX" ...>FILENAME</a>
  std::size_t pos = 0;
  for (;;) {
    auto open = body.find("<a", pos);
    if (open == std::string::npos) break;
    auto close = body.find('>', open);
    if (close == std::string::npos) break;
    pos = close + 1;
    if (open + 2 < body.size() && !std::isspace(static_cast<unsigned char>(body[open + 2]))) continue;
    std::string tag = body.substr(open, close - open);
    auto href = attribute(tag, "href");
    if (!href) continue;
    std::string link = *href, fragment;
    if (auto hash = link.find('#'); hash != std::string::npos) {
      fragment = link.substr(hash + 1);
      link = link.substr(0, hash);
    }
    std::string path = link.substr(0, link.find('?'));
    std::string filename = http::percent_decode(
        path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1));
    std::string sha;
    if (fragment.rfind("sha256=", 0) == 0) sha = fragment.substr(7);
    add_candidate(out, filename, http::resolve_reference(page_url, link), sha, std::nullopt);
  }
  return out;
}

std::vector<WheelCandidate> simple_index_wheels(const std::string& index_url, const std::string& project) {
  std::string base = index_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string url = base + "/" + normalize_name(project) + "/";
  http::Client client;
  http::Request req;
  req.url = url;
  req.headers.add("Accept",
                  "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01");
  http::Result r = client.fetch(std::move(req));
  long status = r.response.status;
  if (status == 404) return {};
  if (status == 401 || status == 403)
    throw Error(ExitCode::auth, http::redact_url(url) + ": index refused access (HTTP " + std::to_string(status) + ")");
  if (!r.ok())
    throw Error(ExitCode::network, http::redact_url(url) + ": index answered HTTP " + std::to_string(status) +
                                       " after " + std::to_string(r.response.attempts) + " attempt(s)");
  return parse_simple_page(r.response.body, r.response.headers.get("Content-Type").value_or("text/html"),
                           r.response.url.empty() ? url : r.response.url);
}

fs::path download_wheel(const std::string& url, const std::string& sha256, std::optional<std::uint64_t> size,
                        WheelCache& cache, download::Observer& observer) {
  fs::path target = cache.downloaded_wheel(sha256);
  std::error_code ec;
  if (fs::exists(target, ec)) return target;  // published only after its hash was checked
  fetch_into_cache(url, sha256, size, target, cache, observer);
  return target;
}

std::string download_unhashed_wheel(const std::string& url, WheelCache& cache, download::Observer& observer) {
  // Remembered per URL, so a second create does not download it again.
  fs::path by_url = cache.root() / "wheels" / ("url-" + util::sha256_hex(url) + ".whl");
  std::error_code ec;
  std::string sha;
  if (fs::exists(by_url, ec)) sha = util::sha256_file(by_url);
  else sha = fetch_into_cache(url, std::nullopt, std::nullopt, by_url, cache, observer);
  fs::path target = cache.downloaded_wheel(sha);
  if (!fs::exists(target, ec)) fs::create_hard_link(by_url, target, ec);
  if (ec) copy_file_contents_to(by_url, target);
  return sha;
}

}  // namespace provkit::wheels
