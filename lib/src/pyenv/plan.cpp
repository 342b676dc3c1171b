#include "provkit/pyenv/plan.hpp"

#include <algorithm>
#include <set>

#include "provkit/pyspec/wheel_tags.hpp"

namespace provkit::pyenv {

using namespace pyspec;
using namespace wheels;

std::string_view reason_name(CreateRefusal r) {
  switch (r) {
    case CreateRefusal::no_compatible_wheel:
    case CreateRefusal::hash_not_locked:
    case CreateRefusal::bad_record: return reason_name(Reason::check_failed);
    case CreateRefusal::would_empty: return reason_name(Reason::invalid_input);
  }
  return reason_name(Reason::internal);
}

ExitCode exit_code(CreateRefusal r) {
  return r == CreateRefusal::would_empty ? ExitCode::usage : ExitCode::check_failed;
}

std::string_view reason_name(ReinstallReason r) {
  switch (r) {
    case ReinstallReason::version_differs: return "version_differs";
    case ReinstallReason::hash_differs: return "hash_differs";
    case ReinstallReason::files_drifted: return "files_drifted";
    case ReinstallReason::not_in_cache: return "not_in_cache";
  }
  return "unknown";
}

std::string_view reason_name(RemovalReason r) {
  switch (r) {
    case RemovalReason::not_in_lock: return "not_in_lock";
    case RemovalReason::marker_false: return "marker_false";
  }
  return "unknown";
}

namespace {

// The best few tags and one of each kind (abi3, none, any), then the count.
std::string tags_summary(const std::vector<std::string>& tags) {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < tags.size() && i < 3; ++i) shown.push_back(tags[i]);
  for (const char* kind : {"-abi3-", "-none-linux", "py3-none-any"})
    for (const auto& t : tags)
      if (t.find(kind) != std::string::npos) {
        if (std::find(shown.begin(), shown.end(), t) == shown.end()) shown.push_back(t);
        break;
      }
  std::string out;
  for (auto& t : shown) out += (out.empty() ? "" : ", ") + t;
  return out + " (" + std::to_string(tags.size()) + " tags in all)";
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool installer_written(std::string_view path, std::string_view dist_info_dir) {
  if (!starts_with(path, dist_info_dir) || path.size() <= dist_info_dir.size() || path[dist_info_dir.size()] != '/')
    return false;
  auto base = path.substr(dist_info_dir.size() + 1);
  return base == "RECORD" || base == "INSTALLER" || base == "REQUESTED" || base == "RECORD.jws" ||
         base == "RECORD.p7s" || base == "direct_url.json";
}

// The files of a wheel that land in site-packages under their own path, with their hashes: everything but
// what the installer writes itself (RECORD, INSTALLER, ...) and .data (scripts, headers and data go
// elsewhere; .data/purelib and .data/platlib land at the path below them).
std::map<std::string, std::string> comparable_wheel_files(const CacheState& c) {
  std::map<std::string, std::string> out;
  const std::string dist_info = c.dist_info;
  const std::string stem = dist_info.substr(0, dist_info.size() - std::string_view(".dist-info").size());
  const std::string data = stem + ".data/";
  for (const auto& [path, hash] : c.files) {
    if (installer_written(path, dist_info)) continue;
    if (starts_with(path, data)) {
      auto rest = std::string_view(path).substr(data.size());
      for (std::string_view lib : {"purelib/", "platlib/"})
        if (starts_with(rest, lib)) out[std::string(rest.substr(lib.size()))] = hash;
      continue;
    }
    out[path] = hash;
  }
  return out;
}

// The installed RECORD's rows for the same files: paths inside site-packages (not "../" nor absolute), less
// what installers write and bytecode (pip records the .pyc files it compiles).
std::map<std::string, std::string> comparable_record(const std::map<std::string, std::string>& record,
                                                     const std::string& dist_info_dir) {
  std::map<std::string, std::string> out;
  for (const auto& [path, hash] : record) {
    if (hash.empty() || starts_with(path, "../") || starts_with(path, "/")) continue;
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".pyc") == 0) continue;
    if (installer_written(path, dist_info_dir)) continue;
    out[path] = hash;
  }
  return out;
}

// The first path where the installed files and the wheel's differ; empty when they are the same files.
std::string first_difference(const std::map<std::string, std::string>& installed,
                             const std::map<std::string, std::string>& wheel) {
  auto a = installed.begin(), b = wheel.begin();
  while (a != installed.end() || b != wheel.end()) {
    if (b == wheel.end() || (a != installed.end() && a->first < b->first)) return a->first;
    if (a == installed.end() || b->first < a->first) return b->first;
    if (a->second != b->second) return a->first;
    ++a, ++b;
  }
  return "";
}

std::string first_drift(const DistCheck& c) {
  for (const auto* list : {&c.modified, &c.missing, &c.outside, &c.unlisted})
    if (!list->empty()) return list->front();
  if (!c.unverifiable.empty()) return c.unverifiable.front().path;
  return "";
}

Fetch fetch_for(const SelectedWheel& w, const std::map<std::string, CacheState>& cache, bool drifted) {
  Fetch f;
  auto found = cache.find(w.sha256());
  const CacheState* c = found == cache.end() ? nullptr : &found->second;
  if (c && c->unpacked) {
    if (drifted) f.step = CacheStep::unpack_again_drifted;
    else f.step = CacheStep::use_unpacked;
  }
  if (!w.wheel.local.empty()) f.source = WheelSource::local_file;
  else if (c && c->downloaded) f.source = WheelSource::downloaded;
  else f.source = WheelSource::download;
  return f;
}

std::string spelled(const SelectedWheel& w) { return w.name.as_written() + " " + w.version.str(); }

std::string fetch_words(const Fetch& f) {
  std::string from = f.source == WheelSource::local_file   ? "the local file"
                     : f.source == WheelSource::downloaded ? "the downloaded wheel"
                                                           : "a download";
  switch (f.step) {
    case CacheStep::use_unpacked: return "cache: unpacked entry";
    case CacheStep::unpack: return "cache: unpack from " + from;
    case CacheStep::unpack_again_drifted:
      return "cache: unpack again from " + from + " (a hardlinked edit may have reached it)";
  }
  return "";
}

nlohmann::json wheel_json(const SelectedWheel& w) {
  return {{"name", w.name.normalized()},
          {"version", w.version.str()},
          {"wheel", w.wheel.wheel.filename},
          {"sha256", w.sha256()}};
}

}  // namespace

std::string choice_hash(const WheelCandidate& c) {
  if (c.local.empty() && !c.sha256.empty()) return c.sha256;
  return c.hashed;
}

std::vector<const WheelCandidate*> rank_wheels(const LockEntry& entry, const std::vector<WheelCandidate>& candidates,
                                               const std::vector<std::string>& tags) {
  TagRanking ranking(tags);
  const PackageName name(entry.name);
  const PackageVersion version(entry.version);
  std::vector<std::pair<int, const WheelCandidate*>> ranked;
  for (const auto& c : candidates) {
    if (PackageName(c.wheel.name) != name || PackageVersion(c.wheel.version) != version) continue;
    int r = ranking.rank(c.wheel);
    if (r >= 0) ranked.emplace_back(r, &c);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<const WheelCandidate*> out;
  out.reserve(ranked.size());
  for (auto& [rank, c] : ranked) out.push_back(c);
  return out;
}

WheelCandidate choose_wheel(const LockEntry& entry, const std::vector<WheelCandidate>& candidates,
                            const std::vector<std::string>& tags,
                            const std::function<std::string(const WheelCandidate&)>& sha256_of) {
  auto ranked = rank_wheels(entry, candidates, tags);
  if (ranked.empty()) {
    std::string seen;
    const PackageName name(entry.name);
    const PackageVersion version(entry.version);
    for (const auto& c : candidates)
      if (PackageName(c.wheel.name) == name && PackageVersion(c.wheel.version) == version)
        seen += (seen.empty() ? "" : ", ") + c.wheel.filename;
    throw Error(CreateRefusal::no_compatible_wheel, "no compatible wheel for " + entry.name + "==" + entry.version +
                                                        " (wheels seen: " + (seen.empty() ? "none" : seen) +
                                                        "; the interpreter accepts " + tags_summary(tags) + ")");
  }
  std::string mismatches;
  for (const auto* c : ranked) {
    std::string sha = sha256_of(*c);
    if (std::find(entry.sha256.begin(), entry.sha256.end(), sha) != entry.sha256.end()) {
      WheelCandidate chosen = *c;
      chosen.sha256 = sha;
      return chosen;
    }
    mismatches += (mismatches.empty() ? "" : ", ") + c->wheel.filename + " has sha256 " + sha;
  }
  throw Error(CreateRefusal::hash_not_locked,
              "no wheel for " + entry.name + "==" + entry.version + " matches the lock's hashes: " + mismatches);
}

bool wants_file_check(const InstalledDist& installed, const std::vector<LockEntry>& selected) {
  const PackageName name(installed.name);
  const PackageVersion version(installed.version);
  return std::any_of(selected.begin(), selected.end(), [&](const LockEntry& e) {
    return PackageName(e.name) == name && PackageVersion(e.version) == version;
  });
}

Plan plan_env(const PlanInputs& in) {
  Plan plan;
  const auto entries = applicable_entries(in.lock, in.markers, in.selection);
  static const std::vector<WheelCandidate> none;
  for (const auto& e : entries) {
    auto found = in.candidates.find(normalize_name(e.name));
    const auto& candidates = found == in.candidates.end() ? none : found->second;
    WheelCandidate chosen = choose_wheel(e, candidates, in.tags, [&](const WheelCandidate& c) {
      std::string sha = choice_hash(c);
      if (sha.empty()) throw Error(Reason::internal, c.wheel.filename + " was ranked but not hashed before planning");
      return sha;
    });
    plan.selected.push_back({PackageName(e.name), PackageVersion(e.version), e.line, std::move(chosen)});
  }

  std::map<PackageName, const InstalledState*> have;
  for (const auto& s : in.installed) have.emplace(PackageName(s.dist.name), &s);
  if (plan.selected.empty() && !have.empty() && !in.allow_empty)
    throw Error(CreateRefusal::would_empty,
                in.lock.file.string() + ": the lock selects no distribution for this interpreter, and " +
                    in.env.string() + " holds " + std::to_string(have.size()) + " that it would remove");

  std::set<PackageName> wanted;
  for (const auto& w : plan.selected) {
    wanted.insert(w.name);
    auto found = have.find(w.name);
    if (found == have.end()) {
      plan.installs.push_back({w, fetch_for(w, in.cache, false)});
      continue;
    }
    const InstalledState& s = *found->second;
    auto reinstall = [&](ReinstallReason why, std::string detail) {
      plan.reinstalls.push_back(
          {w, fetch_for(w, in.cache, why == ReinstallReason::files_drifted), s.dist, why, std::move(detail)});
    };
    if (PackageVersion(s.dist.version) != w.version) {
      reinstall(ReinstallReason::version_differs, "");
      continue;
    }
    if (s.files && !s.files->clean()) {
      reinstall(ReinstallReason::files_drifted, first_drift(*s.files));
      continue;
    }
    auto cached = in.cache.find(w.sha256());
    if (cached == in.cache.end() || !(cached->second.unpacked || cached->second.from_wheel_record)) {
      reinstall(ReinstallReason::not_in_cache, "");
      continue;
    }
    if (s.record) {
      auto diff = first_difference(comparable_record(*s.record, s.dist.dist_info.filename().string()),
                                   comparable_wheel_files(cached->second));
      if (!diff.empty()) {
        reinstall(ReinstallReason::hash_differs, diff);
        continue;
      }
    }
    plan.keeps.push_back({w, s.dist});
  }

  // What the lock does not select: named by an entry left out for this interpreter, or by none.
  std::map<PackageName, int> in_lock;
  for (const auto& e : in.lock.entries) in_lock.emplace(PackageName(e.name), e.line);
  for (const auto& [name, s] : have) {
    if (wanted.count(name)) continue;
    auto entry = in_lock.find(name);
    if (entry == in_lock.end()) plan.removals.push_back({s->dist, RemovalReason::not_in_lock, 0});
    else plan.removals.push_back({s->dist, RemovalReason::marker_false, entry->second});
  }
  return plan;
}

std::vector<std::string> describe(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& i : plan.installs)
    out.push_back("plan: install " + spelled(i.wheel) + " (" + i.wheel.wheel.wheel.filename + "): not installed; " +
                  fetch_words(i.fetch));
  for (const auto& r : plan.reinstalls) {
    std::string why;
    switch (r.reason) {
      case ReinstallReason::version_differs: why = r.installed.version + " is installed"; break;
      case ReinstallReason::hash_differs:
        why = "the installed files are another wheel's (first difference: " + r.detail + ")";
        break;
      case ReinstallReason::files_drifted: why = "its files no longer match RECORD (first: " + r.detail + ")"; break;
      case ReinstallReason::not_in_cache:
        why = "the wheel is not in the cache to compare the installed files with";
        break;
    }
    out.push_back("plan: reinstall " + spelled(r.wheel) + " (" + r.wheel.wheel.wheel.filename +
                  "): " + std::string(reason_name(r.reason)) + ": " + why + "; " + fetch_words(r.fetch));
  }
  for (const auto& r : plan.removals)
    out.push_back("plan: remove " + r.installed.name + " " + r.installed.version + ": " +
                  std::string(reason_name(r.reason)) + ": " +
                  (r.reason == RemovalReason::not_in_lock ? std::string("no lock entry names it")
                                                          : "its lock entry (line " + std::to_string(r.lock_line) +
                                                                ") is not selected for this interpreter"));
  for (const auto& k : plan.keeps)
    out.push_back("plan: keep " + spelled(k.wheel) + " (" + k.wheel.wheel.wheel.filename +
                  "): installed, its files match RECORD and the wheel's");
  return out;
}

nlohmann::json to_json(const Plan& plan) {
  nlohmann::json j = {{"install", nlohmann::json::array()},
                      {"reinstall", nlohmann::json::array()},
                      {"remove", nlohmann::json::array()},
                      {"keep", nlohmann::json::array()}};
  for (const auto& i : plan.installs) j["install"].push_back(wheel_json(i.wheel));
  for (const auto& r : plan.reinstalls) {
    auto w = wheel_json(r.wheel);
    w["installed_version"] = r.installed.version;
    w["reason"] = reason_name(r.reason);
    j["reinstall"].push_back(w);
  }
  for (const auto& r : plan.removals)
    j["remove"].push_back({{"name", normalize_name(r.installed.name)},
                           {"version", r.installed.version},
                           {"reason", reason_name(r.reason)}});
  for (const auto& k : plan.keeps) j["keep"].push_back(wheel_json(k.wheel));
  return j;
}

}  // namespace provkit::pyenv
