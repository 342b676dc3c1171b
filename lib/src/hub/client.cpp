#include "provkit/hub/client.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "provkit/http/token.hpp"
#include "provkit/hub/cache_layout.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/json.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"

namespace provkit::hub {

namespace fs = std::filesystem;

std::string repo_type_name(RepoType type) {
  switch (type) {
    case RepoType::dataset: return "dataset";
    case RepoType::space: return "space";
    default: return "model";
  }
}

std::optional<RepoType> parse_repo_type(std::string_view name) {
  if (name == "model") return RepoType::model;
  if (name == "dataset") return RepoType::dataset;
  if (name == "space") return RepoType::space;
  return std::nullopt;
}

namespace {
const char* type_prefix(RepoType t) {
  switch (t) {
    case RepoType::dataset: return "datasets/";
    case RepoType::space: return "spaces/";
    default: return "";
  }
}

std::string describe(const Repo& repo) {
  return repo.type == RepoType::model ? repo.id : repo_type_name(repo.type) + " " + repo.id;
}
}  // namespace

std::string encode_revision(std::string_view revision) { return http::percent_encode(revision, false); }
std::string encode_path(std::string_view path) { return http::percent_encode(path, true); }

std::string api_prefix(const Repo& repo) { return "/api/" + repo_type_name(repo.type) + "s/" + repo.id; }

std::string resolve_url(const std::string& endpoint, const Repo& repo, std::string_view revision,
                        std::string_view path) {
  return endpoint + "/" + type_prefix(repo.type) + repo.id + "/resolve/" + encode_revision(revision) + "/" +
         encode_path(path);
}

std::string tree_url(const std::string& endpoint, const Repo& repo, std::string_view revision) {
  return endpoint + api_prefix(repo) + "/tree/" + encode_revision(revision) + "?recursive=true&expand=false";
}

std::string revision_url(const std::string& endpoint, const Repo& repo, std::string_view revision) {
  return endpoint + api_prefix(repo) + "/revision/" + encode_revision(revision);
}

std::vector<TreeEntry> parse_tree_page(std::string_view json_text) {
  auto bad = [](const std::string& what) {
    return Error(ExitCode::network, "malformed tree listing from the Hub: " + what);
  };
  auto parsed = util::read_json(json_text);
  if (auto* e = std::get_if<util::JsonError>(&parsed))
    throw bad(e->reason == util::JsonRefusal::too_deep ? e->why : "not JSON");
  const nlohmann::json doc = std::move(std::get<nlohmann::json>(parsed));
  if (!doc.is_array()) throw bad("not a JSON array");
  auto get_string = [&](const nlohmann::json& obj, const char* key, bool required) -> std::string {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) throw bad(std::string("an entry has no \"") + key + "\"");
      return {};
    }
    if (!it->is_string()) throw bad(std::string("\"") + key + "\" is not a string");
    return it->get<std::string>();
  };
  auto get_size = [&](const nlohmann::json& obj, const char* key, bool required) -> std::uint64_t {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) throw bad(std::string("an entry has no \"") + key + "\"");
      return 0;
    }
    if (!it->is_number_unsigned()) throw bad(std::string("\"") + key + "\" is not a non-negative integer");
    return it->get<std::uint64_t>();
  };
  // Ids become file names (blobs/<etag>, lock files): only the exact id
  // shapes are taken, never a string that could name another place.
  auto get_id = [&](const nlohmann::json& obj, const char* key, bool required, std::size_t hex_digits,
                    const std::string& path) {
    std::string id = get_string(obj, key, required);
    if ((required || !id.empty()) && !util::is_hex(id, hex_digits))
      throw bad("the \"" + std::string(key) + "\" of '" + util::printable(path) + "' is not " +
                std::to_string(hex_digits) + " lower-case hex digits");
    return id;
  };
  std::vector<TreeEntry> out;
  out.reserve(doc.size());
  for (const auto& item : doc) {
    if (!item.is_object()) throw bad("an entry is not an object");
    TreeEntry e;
    e.type = get_string(item, "type", true);
    e.path = get_string(item, "path", true);
    e.oid = get_id(item, "oid", e.type == "file", 40, e.path);
    e.size = get_size(item, "size", e.type == "file");
    if (auto it = item.find("lfs"); it != item.end() && !it->is_null()) {
      if (!it->is_object()) throw bad("\"lfs\" is not an object");
      LfsInfo lfs;
      lfs.oid = get_id(*it, "oid", true, 64, e.path);
      lfs.size = get_size(*it, "size", true);
      lfs.pointer_size = get_size(*it, "pointerSize", false);
      e.lfs = lfs;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string endpoint_from(const std::string& flag) {
  std::string e = !flag.empty() ? flag : util::env_value(util::EnvVar::hf_endpoint);
  if (e.empty()) e = "https://huggingface.co";
  while (e.size() > 1 && e.back() == '/') e.pop_back();
  if (!http::Url::parse(e))
    throw Error(ExitCode::usage, "the Hub endpoint '" + http::redact_url(e) + "' is not an http(s) URL");
  return e;
}

namespace {
// A token goes into a header line: a control character in it (a CR/LF would
// start a header of the sender's choosing) is refused, naming where it came
// from and never the token.
Token checked(Token t) {
  for (unsigned char c : t.value)
    if (c < 0x20 || c == 0x7f)
      throw Error(ExitCode::usage, "the token from " + util::printable(t.source) +
                                       " contains a control character (a line break?); nothing was sent");
  return t;
}
Token find_token_unchecked(const std::string& token_file);
}  // namespace

Token find_token(const std::string& token_file) { return checked(find_token_unchecked(token_file)); }

namespace {
Token find_token_unchecked(const std::string& token_file) {
  // huggingface_hub's order: the token given (here a file the caller names), then the environment, then the
  // default token file.
  if (!token_file.empty()) {
    std::string t;
    try {
      t = util::trim(util::read_file(token_file));
    } catch (const Error&) {
      throw Error(ExitCode::usage, token_file + ": cannot read the token file");
    }
    if (t.empty()) throw Error(ExitCode::usage, token_file + ": the token file is empty");
    return {t, token_file};
  }
  for (auto variable : {util::EnvVar::hf_token, util::EnvVar::hugging_face_hub_token})
    if (auto env = util::trim(util::env_value(variable)); !env.empty())
      return {env, std::string(util::env_entry(variable).name)};
  std::string path = util::env_value(util::EnvVar::hf_token_path);
  std::string source = "HF_TOKEN_PATH (" + path + ")";
  if (path.empty()) path = (hfcache::hf_home() / "token").string(), source = path;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    try {
      if (auto t = util::trim(util::read_file(path)); !t.empty()) return {t, source};
    } catch (const Error&) {
      // An unreadable default token file is as good as none.
    }
  }
  return {};
}
}  // namespace

std::string_view reason_name(HubRefusal r) {
  switch (r) {
    case HubRefusal::revision_not_found:
    case HubRefusal::entry_not_found: return reason_name(Reason::check_failed);
    case HubRefusal::upstream:
    case HubRefusal::commit_mismatch: return reason_name(Reason::network);
    case HubRefusal::gated:
    case HubRefusal::not_found_or_private:
    case HubRefusal::access_refused: break;
  }
  return reason_name(Reason::auth);
}

ExitCode exit_code(HubRefusal r) {
  switch (r) {
    case HubRefusal::revision_not_found:
    case HubRefusal::entry_not_found: return ExitCode::check_failed;
    case HubRefusal::upstream:
    case HubRefusal::commit_mismatch: return ExitCode::network;
    case HubRefusal::gated:
    case HubRefusal::not_found_or_private:
    case HubRefusal::access_refused: break;
  }
  return ExitCode::auth;
}

Error hub_error(const Repo& repo, const std::string& what, long status, const http::Headers& headers,
                const std::string& token_source) {
  const bool had_token = !token_source.empty();
  const std::string the_token = "the token from " + token_source;
  std::string code = headers.get("x-error-code").value_or("");
  std::string name = describe(repo);
  // Where the library looks for a token by itself; a tool names its own flag after the sentence.
  const std::string token_hint = "HF_TOKEN or HF_TOKEN_PATH";
  if (code == "GatedRepo") {
    if (had_token)
      return Error(HubRefusal::gated, name + " is a gated repository and " + the_token +
                                          " has no access to it: request "
                                          "access on the repository's Hub page with the account of that token");
    return Error(HubRefusal::gated, name +
                                        " is a gated repository: accept its conditions on the repository's Hub page "
                                        "and provide a token of that account (" +
                                        token_hint + ")");
  }
  if (code == "RepoNotFound" || status == 401) {
    if (had_token)
      return Error(HubRefusal::not_found_or_private,
                   "repository " + name + " was not found, or " + the_token + " has no access to it");
    return Error(HubRefusal::not_found_or_private, "repository " + name +
                                                       " was not found, or it is private and needs a token with "
                                                       "access to it (" +
                                                       token_hint + ")");
  }
  if (status == 403)
    return Error(HubRefusal::access_refused, "access to " + name + " refused (HTTP 403) for " + what +
                                                 (had_token ? " with " + the_token : std::string()));
  if (code == "RevisionNotFound")
    return Error(HubRefusal::revision_not_found, what + ": the revision is not in " + name);
  if (code == "EntryNotFound" || status == 404)
    return Error(HubRefusal::entry_not_found, what + ": not found in " + name + " (HTTP 404)");
  std::string msg = util::printable(headers.get("x-error-message").value_or(""));  // upstream text
  if (msg.size() > 200) msg.resize(200);
  return Error(HubRefusal::upstream,
               what + ": the Hub answered HTTP " + std::to_string(status) + (msg.empty() ? "" : " (" + msg + ")"));
}

HubClient::HubClient(std::string endpoint, Token token, http::Options options)
    : endpoint_(std::move(endpoint)),
      token_(std::move(token.value)),
      token_source_(std::move(token.source)),
      client_(std::move(options)) {
  if (!token_.empty() && token_source_.empty()) token_source_ = "the caller";
}

void HubClient::fail(const Repo& repo, const std::string& what, const http::Response& response) const {
  throw hub_error(repo, what, response.status, response.headers, token_source_);
}

std::string HubClient::get_json(const Repo& repo, const std::string& url, const std::string& what,
                                http::Response* out) {
  http::Request req;
  req.url = url;
  // The token belongs to the endpoint; never hand it to another origin.
  if (http::token_allowed(endpoint_, url)) req.bearer_token = token_;
  http::Result r = client_.fetch(std::move(req));
  if (!r.ok()) fail(repo, what, r.response);
  std::string body = std::move(r.response.body);
  if (out) *out = std::move(r.response);
  return body;
}

std::string HubClient::resolve_commit(const Repo& repo, const std::string& revision) {
  std::string what = "revision " + revision + " of " + describe(repo);
  std::string body;
  try {
    body = get_json(repo, revision_url(endpoint_, repo, revision), what);
  } catch (const Error& e) {
    // The Hub resolves a branch, a tag or a whole commit id, never an abbreviated one (git's 7-hex form).
    const bool short_commit = revision.size() >= 4 && revision.size() < 40 && util::is_hex(revision, revision.size());
    if (!short_commit || !e.is(HubRefusal::revision_not_found)) throw;
    throw Error(e, std::string(e.what()) + "; if " + revision +
                       " is a commit, give the 40-hex commit (git rev-parse, or the Hub's commit history): the Hub "
                       "does not resolve an abbreviated one");
  }
  auto parsed = util::read_json(body);
  const auto* doc_if = std::get_if<nlohmann::json>(&parsed);
  const nlohmann::json doc = doc_if ? *doc_if : nlohmann::json();
  if (!doc.is_object() || !doc.contains("sha") || !doc["sha"].is_string() ||
      !util::is_hex(doc["sha"].get<std::string>(), 40))
    throw Error(ExitCode::network, what + ": the Hub's answer has no commit sha");
  std::string commit = doc["sha"].get<std::string>();
  if (util::is_hex(revision, 40) && commit != revision)
    throw Error(HubRefusal::commit_mismatch, what + ": the Hub answered with another commit, " + commit +
                                                 "; a commit id must resolve to itself, so nothing was fetched");
  return commit;
}

std::vector<TreeEntry> HubClient::list_tree(const Repo& repo, const std::string& revision) {
  std::string what = "the tree of " + describe(repo) + " at " + revision;
  std::vector<TreeEntry> all;
  std::set<std::string> seen;
  std::uint64_t listed_bytes = 0;
  std::string url = tree_url(endpoint_, repo, revision);
  while (!url.empty()) {
    if (!seen.insert(url).second) throw Error(ExitCode::network, what + ": the Hub's page links loop");
    // A server handing out a new cursor on every page is a loop too, one
    // that the set above cannot see.
    if (seen.size() > kMaxTreePages)
      throw Error(ExitCode::network, what + ": the Hub's listing goes on past " + std::to_string(kMaxTreePages) +
                                         " pages (" + std::to_string(all.size()) + " entries); giving up");
    http::Response resp;
    std::string body = get_json(repo, url, what, &resp);
    if ((listed_bytes += body.size()) > kMaxTreeBytes)
      throw Error(ExitCode::network, what + ": the Hub's listing is longer than " +
                                         std::to_string(kMaxTreeBytes >> 20) + " MiB; giving up");
    // The entries are counted before they are kept: a page of 60 MiB of tiny entries is refused whole.
    auto page = parse_tree_page(body);
    if (all.size() + page.size() > kMaxTreeEntries)
      throw Error(ExitCode::network, what + ": the Hub's listing has more than " + std::to_string(kMaxTreeEntries) +
                                         " entries (" + std::to_string(all.size() + page.size()) + " after page " +
                                         std::to_string(seen.size()) + "); giving up");
    all.insert(all.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
    url.clear();
    if (auto link = resp.headers.get("link"))
      if (auto next = http::parse_link_next(*link)) url = http::resolve_reference(resp.url, *next);
  }
  return all;
}

std::string HubClient::download_small(const Repo& repo, const std::string& revision, const std::string& path) {
  http::Request req;
  req.url = resolve_url(endpoint_, repo, revision, path);
  req.bearer_token = token_;
  http::Result r = client_.fetch(std::move(req));
  if (!r.ok()) fail(repo, path + " at " + revision, r.response);
  return std::move(r.response.body);
}

}  // namespace provkit::hub
