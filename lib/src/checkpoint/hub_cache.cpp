#include "provkit/checkpoint/hub_cache.hpp"

#include <algorithm>
#include <cctype>

#include "provkit/checkpoint/header.hpp"
#include "provkit/error.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"

namespace provkit::checkpoint {

namespace {
// A ref holds one commit id; a planted huge file is not read.
constexpr std::size_t kRefMax = 4096;
}  // namespace

fs::path hf_home() {
  if (auto v = util::env_value(util::EnvVar::hf_home); !v.empty()) return v;
  if (auto v = util::env_value(util::EnvVar::xdg_cache_home); !v.empty()) return fs::path(v) / "huggingface";
  auto home = util::env_value(util::EnvVar::home);
  return fs::path(home.empty() ? "/root" : home) / ".cache" / "huggingface";
}

fs::path hub_cache_dir() {
  if (auto v = util::env_value(util::EnvVar::hf_hub_cache); !v.empty()) return v;
  return hf_home() / "hub";
}

fs::path llama_hf_cache_dir() {
  if (auto v = util::env_value(util::EnvVar::llama_cache); !v.empty()) return v;
  return hub_cache_dir();
}

bool offline_from_env() {
  std::string v = util::lower(util::env_value(util::EnvVar::hf_hub_offline));
  return v == "1" || v == "on" || v == "yes" || v == "true";
}

bool is_valid_repo_id(std::string_view id) {
  // The Hub's rule: one or two parts of [A-Za-z0-9._-], no "--" or "..",
  // not starting or ending with '-' or '.'.
  if (id.empty() || id.size() > 200) return false;
  auto slash = id.find('/');
  if (slash != std::string_view::npos && id.find('/', slash + 1) != std::string_view::npos) return false;
  auto part_ok = [](std::string_view p) {
    if (p.empty() || p.size() > 96) return false;
    for (char c : p)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
    if (p.front() == '-' || p.front() == '.' || p.back() == '-' || p.back() == '.') return false;
    return p.find("--") == std::string_view::npos && p.find("..") == std::string_view::npos;
  };
  if (slash == std::string_view::npos) return part_ok(id);
  return part_ok(id.substr(0, slash)) && part_ok(id.substr(slash + 1));
}

std::string cache_folder_name(std::string_view type, std::string_view id) {
  std::string out = std::string(type) + "s--";
  for (char c : id) {
    if (c == '/') out += "--";
    else out += c;
  }
  return out;
}

namespace {
// A branch or tag name as refs/<name> holds it: relative parts, none empty, "." or "..", no control character.
bool is_ref_name(std::string_view rev) {
  if (rev.empty() || rev.size() > 255 || rev.front() == '/' || rev.back() == '/') return false;
  for (char c : rev)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') return false;
  for (const auto& part : util::split(rev, '/'))
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}
}  // namespace

CachedSnapshot find_cached_snapshot(const fs::path& cache, std::string_view repo_id, std::string_view revision) {
  if (!is_valid_repo_id(repo_id))
    throw Error(ExitCode::usage, "'" + util::printable(repo_id) + "' is not a valid Hub repository id (ORG/NAME)");
  CachedSnapshot s;
  s.revision = revision.empty() ? "main" : std::string(revision);
  if (!is_ref_name(s.revision))
    throw Error(ExitCode::usage, "'" + util::printable(s.revision) + "' is not a revision name");
  s.repo_dir = cache / cache_folder_name("model", repo_id);
  std::error_code ec;
  if (!fs::is_directory(s.repo_dir, ec)) {
    s.missing = util::printable(s.repo_dir.string()) + " is not there";
    return s;
  }
  const fs::path ref = s.repo_dir / "refs" / s.revision;
  if (fs::is_regular_file(ref, ec)) {
    std::string commit = util::trim(util::read_file(ref, kRefMax));
    if (!util::is_hex(commit, 40)) {
      s.missing = util::printable(ref.string()) + " holds no commit id";
      return s;
    }
    s.commit = commit;
  } else if (util::is_hex(s.revision, 40)) {
    s.commit = s.revision;  // a commit named as the revision: its snapshot folder directly
  } else {
    s.missing = "no ref " + util::printable(s.revision) + " in " + util::printable((s.repo_dir / "refs").string());
    return s;
  }
  fs::path dir = s.repo_dir / "snapshots" / s.commit;
  if (!fs::is_directory(dir, ec)) {
    s.missing = "no snapshot " + util::printable(dir.string()) + " (revision " + util::printable(s.revision) + ")";
    s.commit.clear();
    return s;
  }
  s.dir = dir;
  return s;
}

namespace {
bool is_llama_model_gguf(const std::string& path) {
  if (!path.ends_with(".gguf")) return false;
  const std::string name = path.substr(path.rfind('/') + 1);  // npos + 1 is 0: the whole path
  for (const char* word : {"mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"})
    if (name.find(word) != std::string::npos) return false;
  return true;
}

// Part 2 or later of a gguf-split set ("-00002-of-00003.gguf"): llama.cpp picks the set by its first part.
bool is_later_split_part(const std::string& path) {
  if (!is_gguf_split_name(path)) return false;
  const auto of = path.rfind("-of-");
  const auto dash = path.rfind('-', of - 1);
  std::string index = path.substr(dash + 1, of - dash - 1);
  index.erase(0, index.find_first_not_of('0'));
  return index != "1";
}

// The tag followed by '.' or '-', case aside (llama.cpp: std::regex(tag + "[.-]", icase)).
bool holds_tag(const std::string& path, const std::string& tag_lower) {
  const std::string p = util::lower(path);
  for (auto at = p.find(tag_lower); at != std::string::npos; at = p.find(tag_lower, at + 1)) {
    const auto next = at + tag_lower.size();
    if (next < p.size() && (p[next] == '.' || p[next] == '-')) return true;
  }
  return false;
}
}  // namespace

std::optional<std::string> pick_llama_gguf(std::vector<std::string> paths, std::string_view tag) {
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> tags;
  if (!tag.empty()) tags.emplace_back(tag);
  else tags = {"Q4_K_M", "Q8_0"};
  for (const auto& t : tags) {
    const std::string lower = util::lower(t);
    for (const auto& p : paths)
      if (is_llama_model_gguf(p) && !is_later_split_part(p) && holds_tag(p, lower)) return p;
  }
  if (tag.empty())
    for (const auto& p : paths)
      if (is_llama_model_gguf(p) && !is_later_split_part(p)) return p;
  return std::nullopt;
}

}  // namespace provkit::checkpoint
