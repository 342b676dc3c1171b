#include "provkit/python/env_create.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "provkit/error.hpp"
#include "provkit/http/http.hpp"
#include "provkit/python/installed.hpp"
#include "provkit/python/simple_index.hpp"
#include "provkit/python/venv.hpp"
#include "provkit/python/wheel_cache.hpp"
#include "provkit/python/wheel_install.hpp"
#include "provkit/python/wheel_tags.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/process.hpp"

namespace provkit::python {

namespace {

// The best few tags and one of each kind (abi3, none, any), then the count.
std::string tags_summary(const std::vector<std::string>& tags) {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < tags.size() && i < 3; ++i) shown.push_back(tags[i]);
  for (const char* kind : {"-abi3-", "-none-linux", "py3-none-any"})
    for (auto& t : tags)
      if (t.find(kind) != std::string::npos) {
        if (std::find(shown.begin(), shown.end(), t) == shown.end()) shown.push_back(t);
        break;
      }
  std::string out;
  for (auto& t : shown) out += (out.empty() ? "" : ", ") + t;
  return out + " (" + std::to_string(tags.size()) + " tags in all)";
}

// Find-links directories: every *.whl, by normalised project name.
std::map<std::string, std::vector<WheelCandidate>> scan_find_links(const std::vector<fs::path>& dirs) {
  std::map<std::string, std::vector<WheelCandidate>> out;
  for (auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw Error(ExitCode::usage, dir.string() + ": no such wheel directory (find-links)");
    for (auto& e : fs::directory_iterator(dir, ec)) {
      auto wn = parse_wheel_name(e.path().filename().string());
      if (!wn || !e.is_regular_file(ec)) continue;  // a FIFO or device named like a wheel is none
      WheelCandidate c;
      c.wheel = *wn;
      c.local = e.path();
      out[normalize_name(wn->name)].push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace

WheelCandidate choose_wheel(const LockEntry& entry, const std::vector<WheelCandidate>& candidates,
                            const std::vector<std::string>& tags,
                            const std::function<std::string(const WheelCandidate&)>& sha256_of) {
  TagRanking ranking(tags);
  std::vector<std::pair<int, const WheelCandidate*>> ranked;
  std::string seen;
  for (auto& c : candidates) {
    if (normalize_name(c.wheel.name) != normalize_name(entry.name) || !same_version(c.wheel.version, entry.version))
      continue;
    seen += (seen.empty() ? "" : ", ") + c.wheel.filename;
    int r = ranking.rank(c.wheel);
    if (r >= 0) ranked.emplace_back(r, &c);
  }
  if (ranked.empty())
    throw Error(ExitCode::check_failed, "no compatible wheel for " + entry.name + "==" + entry.version +
                                            " (wheels seen: " + (seen.empty() ? "none" : seen) +
                                            "; the interpreter accepts " + tags_summary(tags) + ")");
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::string mismatches;
  for (auto& [rank, c] : ranked) {
    // A local file is always hashed (a lock's word is not proof); a URL's stated
    // hash is checked while it downloads.
    std::string sha = (c->local.empty() && !c->sha256.empty()) ? c->sha256 : sha256_of(*c);
    if (std::find(entry.sha256.begin(), entry.sha256.end(), sha) != entry.sha256.end()) {
      WheelCandidate chosen = *c;
      chosen.sha256 = sha;
      return chosen;
    }
    mismatches += (mismatches.empty() ? "" : ", ") + c->wheel.filename + " has sha256 " + sha;
  }
  throw Error(ExitCode::check_failed,
              "no wheel for " + entry.name + "==" + entry.version + " matches the lock's hashes: " + mismatches);
}

CreateResult create_env(const CreateOptions& o) {
  CreateResult result;
  const unsigned jobs = o.jobs ? o.jobs : util::default_jobs();
  Interpreter it = query_interpreter(o.python, o.cache_dir);
  Lock lock = read_lock(o.lock);
  auto entries = applicable_entries(lock, it.markers, o.selection);
  const auto tags = compatible_tags(it);
  WheelCache cache(o.cache_dir);

  // Candidates per entry: explicit pylock wheels first, then find-links, then indexes.
  std::vector<fs::path> find_links = o.find_links;
  for (auto& f : lock.find_links) find_links.push_back(f);
  std::vector<std::string> index_urls = o.index_urls;
  if (index_urls.empty()) index_urls = lock.index_urls;
  auto local = scan_find_links(find_links);

  struct Planned {
    const LockEntry* entry;
    WheelCandidate wheel;
    std::string sha256;
    CacheEntry cached;
  };
  std::vector<Planned> plan(entries.size());
  util::parallel_for(entries.size(), jobs, [&](std::size_t i) {
    const LockEntry& e = entries[i];
    std::vector<WheelCandidate> candidates;
    for (auto& w : e.wheels) {
      WheelCandidate c;
      c.wheel = *parse_wheel_name(w.filename);
      c.sha256 = w.sha256;
      c.size = w.size;
      if (!w.path.empty())
        c.local = fs::path(w.path).is_absolute() ? fs::path(w.path) : lock.file.parent_path() / w.path;
      else if (w.url.rfind("file://", 0) == 0) c.local = http::percent_decode(w.url.substr(7));
      else c.url = w.url;
      // The same file offered by --find-links saves a download.
      if (c.local.empty()) {
        auto found = local.find(normalize_name(c.wheel.name));
        if (found != local.end())
          for (auto& l : found->second)
            if (l.wheel.filename == w.filename) c.local = l.local, c.url.clear();
      }
      candidates.push_back(std::move(c));
    }
    if (e.wheels.empty()) {
      auto found = local.find(normalize_name(e.name));
      if (found != local.end()) candidates = found->second;
      for (auto& url : index_urls) {
        if (!candidates.empty()) break;
        for (auto& c : simple_index_wheels(url, e.name)) candidates.push_back(std::move(c));
      }
    }
    WheelCandidate chosen = choose_wheel(e, candidates, tags, [&](const WheelCandidate& c) {
      if (c.local.empty()) return download_unhashed_wheel(c.url, cache);
      // uv refuses a local wheel whose size is not the lock's; so does envbuild.
      std::error_code size_ec;
      auto on_disk = fs::file_size(c.local, size_ec);
      if (c.size && !size_ec && on_disk != *c.size)
        throw Error(ExitCode::check_failed, c.local.string() + " is " + std::to_string(on_disk) +
                                                " bytes; the lock says " + std::to_string(*c.size));
      return cache.local_wheel_sha256(c.local);
    });
    plan[i].entry = &e;
    plan[i].sha256 = chosen.sha256;
    plan[i].wheel = std::move(chosen);
  });

  // What the environment holds now (nothing is changed before the cache is filled).
  VenvLayout layout = venv_layout(o.env, it);
  std::vector<InstalledDist> installed;
  std::error_code ec;
  if (fs::is_directory(layout.purelib, ec)) installed = list_installed(layout.purelib);
  if (layout.platlib != layout.purelib && fs::is_directory(layout.platlib, ec))
    for (auto& d : list_installed(layout.platlib)) installed.push_back(d);
  std::map<std::string, InstalledDist> have;
  for (auto& d : installed) have[normalize_name(d.name)] = d;

  if (plan.empty() && !have.empty() && !o.allow_empty)
    throw Error(ExitCode::usage, o.lock.string() + ": the lock selects no distribution for this interpreter, and " +
                                     o.env.string() + " holds " + std::to_string(have.size()) +
                                     " that it would remove; --allow-empty empties the environment");
  std::vector<std::size_t> to_install;
  std::vector<InstalledDist> to_remove;
  std::vector<std::string> same_version_names;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto found = have.find(normalize_name(plan[i].entry->name));
    if (found == have.end()) {
      to_install.push_back(i);
    } else if (!same_version(found->second.version, plan[i].entry->version)) {
      to_remove.push_back(found->second);
      to_install.push_back(i);
    } else {
      same_version_names.push_back(found->first);
    }
  }
  std::map<std::string, bool> wanted;
  for (auto& p : plan) wanted[normalize_name(p.entry->name)] = true;
  for (auto& [name, d] : have)
    if (!wanted.count(name)) to_remove.push_back(d);

  // Same version installed: kept only when its files still match RECORD.
  std::vector<char> drifted(plan.size(), 0);
  util::parallel_for(plan.size(), jobs, [&](std::size_t i) {
    auto found = have.find(normalize_name(plan[i].entry->name));
    if (found == have.end() || !same_version(found->second.version, plan[i].entry->version)) return;
    drifted[i] = !check_dist(layout.root, found->second, nullptr).clean();
  });
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto name = normalize_name(plan[i].entry->name);
    if (drifted[i]) {
      // Hardlinked files are shared with the cache: an edit in the environment
      // may have changed the cache entry too, so it is unpacked afresh.
      cache.evict(plan[i].sha256);
      to_remove.push_back(have[name]);
      to_install.push_back(i);
    } else if (have.count(name) && same_version(have[name].version, plan[i].entry->version)) {
      result.unchanged.push_back(plan[i].entry->name + "==" + plan[i].entry->version);
    }
  }

  // Fill the cache (download and unpack what is missing), in parallel; new
  // entries are published together once their files are on disk.
  std::mutex warn_mutex, staged_mutex;
  std::vector<std::pair<std::size_t, WheelCache::Staged>> staged_entries;
  auto fill = [&](std::size_t k) {
    Planned& p = plan[to_install[k]];
    fs::path wheel_file = p.wheel.local;
    std::error_code ec;
    if (wheel_file.empty() && fs::exists(cache.downloaded_wheel(p.sha256), ec))
      wheel_file = cache.downloaded_wheel(p.sha256);
    auto found = cache.find(p.sha256);
    if (found) {
      // An entry edited since it was extracted (through a hardlink from an
      // environment) must not reach another one: unpacked again from its wheel.
      auto changed = cache.changed_files(*found);
      if (!changed.empty()) {
        cache.evict(p.sha256);
        found.reset();
        std::lock_guard lock(warn_mutex);
        result.warnings.push_back("the cache's copy of " + p.wheel.wheel.filename + " had " +
                                  std::to_string(changed.size()) + " file" + (changed.size() > 1 ? "s" : "") +
                                  " changed since it was unpacked (first: " + changed.front() +
                                  "; an edit through a hardlink?); unpacked again from the verified wheel");
      }
    }
    if (!found && wheel_file.empty()) wheel_file = download_wheel(p.wheel.url, p.sha256, p.wheel.size, cache);
    if (found) {
      p.cached = *found;
    } else {
      auto staged = cache.stage(p.sha256, wheel_file);
      p.cached = staged.entry;
      std::lock_guard lock(staged_mutex);
      staged_entries.emplace_back(to_install[k], std::move(staged));
    }
    if (!p.cached.info.record_problems.empty()) {
      const auto& probs = p.cached.info.record_problems;
      std::string msg = p.wheel.wheel.filename + " has a bad RECORD (" + std::to_string(probs.size()) + " problem" +
                        (probs.size() > 1 ? "s" : "") + ", first: " + probs.front() + ")";
      if (!o.allow_bad_record) throw Error(ExitCode::check_failed, msg + "; --allow-bad-record installs it anyway");
      std::lock_guard lock(warn_mutex);
      result.warnings.push_back(msg + "; installed because of --allow-bad-record");
    }
  };
  std::vector<WheelCache::Staged> staged_only;
  auto publish = [&] {
    for (auto& [i, st] : staged_entries) staged_only.push_back(st);
    cache.publish_all(staged_only);
    for (auto& [i, st] : staged_entries) plan[i].cached.tree = cache.root() / "unpacked" / st.sha256 / "tree";
  };
  try {
    util::parallel_for(to_install.size(), jobs, fill);
  } catch (...) {
    publish();  // what was unpacked is sound (RECORD problems are kept with it)
    throw;
  }
  publish();

  // Every wheel's layout is judged (names, .data, nothing over the skeleton)
  // before the environment is touched.
  for (auto i : to_install) check_wheel_fits(plan[i].cached, plan[i].wheel.wheel.filename, layout);

  // Only now touch the environment: skeleton, removals, then installs in parallel.
  create_venv(layout, it, PROVKIT_VERSION);
  for (auto& d : to_remove) {
    auto left = uninstall_dist(layout.root, d);
    if (!left.empty())
      result.warnings.push_back(d.name + " " + d.version + ": RECORD lists " + std::to_string(left.size()) + " path" +
                                (left.size() > 1 ? "s" : "") +
                                " outside the environment or through a link, left alone (first: " + left.front() + ")");
    if (!wanted.count(normalize_name(d.name))) result.removed.push_back(d.name + "==" + d.version);
  }
  Linker linker(o.link_mode);
  util::parallel_for(to_install.size(), jobs, [&](std::size_t k) {
    Planned& p = plan[to_install[k]];
    install_wheel(p.cached, p.wheel.wheel.filename, layout, linker);
  });
  for (auto i : to_install) result.installed.push_back(plan[i].entry->name + "==" + plan[i].entry->version);
  if (!to_install.empty()) result.link_mode = link_mode_name(linker.mode());
  // The fallback belongs to the cache's file system: said once per cache.
  if (auto w = linker.warning(); !w.empty() && cache.first_fallback_notice(std::string(link_mode_name(o.link_mode)) +
                                                                           ">" + link_mode_name(linker.mode())))
    result.warnings.insert(result.warnings.begin(), w + " (said once for this cache)");

  if (o.compile && !to_install.empty()) {
    util::RunOptions run_options;
    run_options.stderr_to = util::StderrTo::inherit;
    int rc = util::shell_status(
        util::run({layout.python.string(), "-m", "compileall", "-q", "-j0", layout.purelib.string()}, run_options));
    if (rc != 0) result.warnings.push_back("bytecode compilation exited with status " + std::to_string(rc));
  }
  return result;
}

nlohmann::json to_json(const CreateResult& r, const std::string& env, double seconds) {
  return {{"environment", env},     {"installed", r.installed}, {"removed", r.removed}, {"unchanged", r.unchanged},
          {"warnings", r.warnings}, {"link_mode", r.link_mode}, {"seconds", seconds}};
}

}  // namespace provkit::python
