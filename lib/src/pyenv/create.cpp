#include "provkit/pyenv/create.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

#include "provkit/error.hpp"
#include "provkit/http/http.hpp"
#include "provkit/pyenv/installed.hpp"
#include "provkit/pyenv/venv.hpp"
#include "provkit/pyspec/wheel_tags.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/log.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/process.hpp"
#include "provkit/wheels/cache.hpp"
#include "provkit/wheels/index.hpp"
#include "provkit/wheels/install.hpp"
#include "provkit/wheels/record.hpp"
#include "provkit/wheels/zip.hpp"

namespace provkit::pyenv {

using namespace pyspec;
using namespace wheels;

namespace {
// One line of the create's phases for the trace, with the milliseconds since `since` (then reset to now):
// where a create's time goes, on a host where a profiler is not at hand.
void trace_phase(std::chrono::steady_clock::time_point& since, const std::string& what) {
  if (!util::log::enabled()) return;
  auto now = std::chrono::steady_clock::now();
  double ms = std::chrono::duration<double, std::milli>(now - since).count();
  since = now;
  util::log::debug("python", [&] { return what + " in " + std::to_string(std::llround(ms)) + " ms"; });
}

// A wheel of more files than this has them placed in groups of about this many (whole directories) on a pool
// of their own.
constexpr std::size_t kFilesPerRange = 1024;

// The most a RECORD read for planning may hold (torch's is about 2 MiB).
constexpr std::size_t kMaxRecordBytes = 64u << 20;

// Find-links directories: every *.whl, by normalised project name.
std::map<std::string, std::vector<WheelCandidate>> scan_find_links(const std::vector<fs::path>& dirs) {
  std::map<std::string, std::vector<WheelCandidate>> out;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw Error(ExitCode::usage, dir.string() + ": no such wheel directory (find-links)");
    for (const auto& e : fs::directory_iterator(dir, ec)) {
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

// The wheels that could satisfy `e`: explicit pylock wheels first (a --find-links file of the same name saves
// a download), else the find-links directories, else the indexes in order until one offers any.
std::vector<WheelCandidate> gather_candidates(const LockEntry& e, const Lock& lock,
                                              const std::map<std::string, std::vector<WheelCandidate>>& local,
                                              const std::vector<std::string>& index_urls) {
  std::vector<WheelCandidate> candidates;
  for (const auto& w : e.wheels) {
    WheelCandidate c;
    c.wheel = *parse_wheel_name(w.filename);
    c.sha256 = w.sha256;
    c.size = w.size;
    if (!w.path.empty()) c.local = fs::path(w.path).is_absolute() ? fs::path(w.path) : lock.file.parent_path() / w.path;
    else if (w.url.rfind("file://", 0) == 0) c.local = http::percent_decode(w.url.substr(7));
    else c.url = w.url;
    if (c.local.empty()) {
      auto found = local.find(normalize_name(c.wheel.name));
      if (found != local.end())
        for (const auto& l : found->second)
          if (l.wheel.filename == w.filename) c.local = l.local, c.url.clear();
    }
    candidates.push_back(std::move(c));
  }
  if (e.wheels.empty()) {
    auto found = local.find(normalize_name(e.name));
    if (found != local.end()) candidates = found->second;
    for (const auto& url : index_urls) {
      if (!candidates.empty()) break;
      for (auto& c : simple_index_wheels(url, e.name)) candidates.push_back(std::move(c));
    }
  }
  return candidates;
}

// The caller's observer of downloads, or one that hears nothing (the base class: stateless, shared).
download::Observer& downloads_of(const CreateOptions& o) {
  static download::Observer quiet;
  return o.downloads ? *o.downloads : quiet;
}

// Hashes the ranked candidates, best first, until one has a hash the lock allows: a local file always (its
// size checked against the lock's first, as uv does), an index file without a stated hash by downloading it
// once. What is not reached stays unhashed; plan_env chooses from the same ranking.
void hash_candidates(const LockEntry& e, std::vector<WheelCandidate>& candidates, const std::vector<std::string>& tags,
                     WheelCache& cache, download::Observer& downloads) {
  for (const auto* ranked : rank_wheels(e, candidates, tags)) {
    auto& c = candidates[static_cast<std::size_t>(ranked - candidates.data())];
    if (choice_hash(c).empty()) {
      if (c.local.empty()) {
        c.hashed = download_unhashed_wheel(c.url, cache, downloads);
      } else {
        std::error_code size_ec;
        auto on_disk = fs::file_size(c.local, size_ec);
        if (c.size && !size_ec && on_disk != *c.size)
          throw Error(ExitCode::check_failed, c.local.string() + " is " + std::to_string(on_disk) +
                                                  " bytes; the lock says " + std::to_string(*c.size));
        c.hashed = cache.local_wheel_sha256(c.local);
      }
    }
    if (std::find(e.sha256.begin(), e.sha256.end(), choice_hash(c)) != e.sha256.end()) return;
  }
}

CacheState cache_state(const WheelCache& cache, const std::string& sha256, std::optional<CacheEntry>& found) {
  CacheState s;
  std::error_code ec;
  s.downloaded = fs::exists(cache.downloaded_wheel(sha256), ec);
  if ((found = cache.find(sha256))) {
    s.unpacked = true;
    s.dist_info = found->info.dist_info;
    for (const auto& f : found->info.files) s.files[f.path] = f.hash;
  }
  return s;
}

// Fills `s` from the wheel's own RECORD (CacheState::from_wheel_record). A wheel whose RECORD cannot be read
// stays not_in_cache: its install, which unpacks and checks it, tells what is wrong with it.
void read_own_record(CacheState& s, const fs::path& wheel) {
  try {
    auto record = read_wheel_record(wheel, kMaxRecordBytes);
    if (!record) return;
    for (auto& row : parse_record(record->text, wheel.filename().string() + ":" + record->dist_info + "/RECORD"))
      if (!row.hash.empty()) s.files[row.path] = row.hash;
    s.dist_info = record->dist_info;
    s.from_wheel_record = true;
  } catch (const Error&) {
    s.files.clear();
  }
}

// The installed RECORD's rows that have a hash, read below the environment's root (no link followed).
std::map<std::string, std::string> read_record_hashes(const util::Root& env, const InstalledDist& d) {
  const fs::path record = d.dist_info / "RECORD";
  std::map<std::string, std::string> out;
  for (auto& row : parse_record(env.read_if_present(record, kMaxRecordBytes), record.string()))
    if (!row.hash.empty()) out[row.path] = row.hash;
  return out;
}

std::string plural(std::size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

CreateResult execute_plan(const Plan& plan, const Interpreter& it, const VenvLayout& layout, const CreateOptions& o,
                          std::map<std::string, CacheEntry> read_for_plan) {
  if (util::log::enabled())
    for (const auto& line : describe(plan)) util::log::debug("python", line);
  CreateResult result;
  result.plan = plan;
  const unsigned jobs = o.jobs ? o.jobs : util::default_jobs();
  WheelCache cache(o.cache_dir);
  auto phase = std::chrono::steady_clock::now();

  // What to install, in the lock's order: installs and reinstalls alike.
  struct Work {
    const SelectedWheel* wheel;
    const Fetch* fetch;
    CacheEntry cached;
  };
  std::vector<Work> work;
  for (const auto& w : plan.selected) {
    for (const auto& i : plan.installs)
      if (i.wheel.name == w.name) work.push_back({&i.wheel, &i.fetch, {}});
    for (const auto& r : plan.reinstalls)
      if (r.wheel.name == w.name) work.push_back({&r.wheel, &r.fetch, {}});
  }

  // Fill the cache in three steps: each wheel found in the cache, or fetched and its unpack begun (the
  // central directory judged), in parallel; then the parts of every unpack on one pool of threads, largest
  // first (torch's largest library, a GB in one member, started late or sharing the cores with a hundred
  // other parts, finished alone seconds after the rest); then each unpack finished (its RECORD checked).
  // New entries are published together once their files are on disk.
  std::mutex warn_mutex, staged_mutex;
  std::vector<std::pair<std::size_t, WheelCache::Staged>> staged_entries;
  std::vector<std::optional<WheelCache::Staging>> stagings(work.size());
  download::Observer& downloads = downloads_of(o);
  auto judge_record = [&](const Work& job) {
    const auto& probs = job.cached.info.record_problems;
    if (probs.empty()) return;
    if (!o.allow_bad_record)
      throw Error(CreateRefusal::bad_record, job.wheel->wheel.wheel.filename + " has a bad RECORD (" +
                                                 plural(probs.size(), "problem") + ", first: " + probs.front() + ")");
    std::lock_guard lock(warn_mutex);
    result.bad_records.push_back({job.wheel->wheel.wheel.filename, probs.size(), probs.front()});
  };
  // The verified wheel file a cache entry is unpacked from: the local one, the cache's download, or a download.
  auto wheel_file_of = [&](const SelectedWheel& w) {
    const std::string sha = w.sha256();
    std::error_code ec;
    if (!w.wheel.local.empty()) return w.wheel.local;
    if (fs::exists(cache.downloaded_wheel(sha), ec)) return cache.downloaded_wheel(sha);
    return download_wheel(w.wheel.url, sha, w.wheel.size, cache, downloads);
  };
  auto find_or_begin = [&](std::size_t k) {
    Work& job = work[k];
    const SelectedWheel& w = *job.wheel;
    const std::string sha = w.sha256();
    std::optional<CacheEntry> found;
    switch (job.fetch->step) {
      case CacheStep::use_unpacked:
        if (auto it = read_for_plan.find(sha); it != read_for_plan.end()) found = std::move(it->second);
        else found = cache.find(sha);
        break;
      case CacheStep::unpack: break;
      case CacheStep::unpack_again_drifted:
        // Hardlinked files are shared with the cache: an edit in the environment may have changed the
        // cache entry too, so it is unpacked afresh.
        cache.evict(sha);
        break;
    }
    if (found) {
      job.cached = std::move(*found);
      judge_record(job);
      return;
    }
    stagings[k] = cache.begin_stage(sha, wheel_file_of(w));
  };
  auto finish = [&](std::size_t k) {
    if (!stagings[k]) return;
    auto staged = cache.finish_stage(*stagings[k]);
    stagings[k].reset();
    work[k].cached = staged.entry;
    {
      std::lock_guard lock(staged_mutex);
      staged_entries.emplace_back(k, std::move(staged));
    }
    judge_record(work[k]);
  };
  std::vector<WheelCache::Staged> staged_only;
  auto publish = [&] {
    for (auto& [k, st] : staged_entries) staged_only.push_back(st);
    cache.publish_all(staged_only);
    for (auto& [k, st] : staged_entries) work[k].cached.tree = cache.root() / "unpacked" / st.sha256 / "tree";
  };
  // Largest wheel first: its download or central directory is the longest of the first step.
  std::vector<std::uint64_t> sizes(work.size());
  for (std::size_t k = 0; k < work.size(); ++k) {
    const auto& c = work[k].wheel->wheel;
    std::error_code ec;
    sizes[k] = c.local.empty() ? c.size.value_or(0) : fs::file_size(c.local, ec);
    if (ec) sizes[k] = 0;
  }
  std::vector<std::size_t> order(work.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  std::size_t unpacked = 0;
  try {
    util::parallel_for(work.size(), jobs, [&](std::size_t k) { find_or_begin(order[k]); });
    std::vector<wheels::WheelUnpack*> unpacks;
    for (auto& staging : stagings)
      if (staging) unpacks.push_back(staging->unpack.get());
    unpacked = unpacks.size();
    wheels::run_parts(unpacks, o.jobs ? o.jobs : util::cpu_jobs());
    util::parallel_for(work.size(), jobs, finish);
  } catch (...) {
    for (auto& staging : stagings)
      if (staging) cache.discard(*staging);
    publish();  // what was unpacked whole is sound (RECORD problems are kept with it)
    throw;
  }
  trace_phase(phase, "create: " + plural(unpacked, "wheel") + " unpacked, " + std::to_string(work.size() - unpacked) +
                         " found unpacked in the cache");
  publish();
  trace_phase(phase, "create: the cache synced to disk, " + plural(staged_only.size(), "wheel") + " published");

  // Every wheel's layout is judged (names, .data, nothing over the skeleton) before the environment is touched.
  const wheels::InstallScheme scheme = install_scheme(layout);
  // Side by side, the largest first (torch's plan of 15,000 files is the phase's longest): each reads its WHEEL
  // and entry points, a cold read apiece when the page cache is dropped.
  std::vector<wheels::InstallPlan> placements(work.size());
  util::parallel_for(work.size(), jobs, [&](std::size_t i) {
    const std::size_t k = order[i];
    placements[k] = plan_install(work[k].cached, work[k].wheel->wheel.wheel.filename, scheme);
  });
  trace_phase(phase, "create: install plans made");

  // Only now touch the environment: skeleton, removals (what the lock leaves out, and what is replaced), then
  // installs in parallel.
  create_venv(layout, it, PROVKIT_VERSION);
  auto uninstall = [&](const InstalledDist& d) {
    auto left = uninstall_dist(layout.root, d);
    if (!left.empty())
      result.warnings.push_back(d.name + " " + d.version + ": RECORD lists " + plural(left.size(), "path") +
                                " outside the environment or through a link, left alone (first: " + left.front() + ")");
  };
  for (const auto& r : plan.reinstalls) uninstall(r.installed);
  for (const auto& r : plan.removals) {
    uninstall(r.installed);
    result.removed.push_back(r.installed.name + "==" + r.installed.version);
  }
  trace_phase(phase, "create: environment made, removals done");
  Linker linker(o.link_mode);
  // Wheels side by side, the most files first; a wheel of many files (torch's 15,000) has its files placed in
  // ranges on a pool of its own (one level of nesting), so the create does not wait on one thread linking it.
  std::vector<std::size_t> by_files(work.size());
  for (std::size_t k = 0; k < by_files.size(); ++k) by_files[k] = k;
  std::stable_sort(by_files.begin(), by_files.end(), [&](std::size_t a, std::size_t b) {
    return placements[a].files.size() > placements[b].files.size();
  });
  const unsigned cores = o.jobs ? o.jobs : util::cpu_jobs();
  auto install = [&](std::size_t k) {
    const std::size_t n = placements[k].files.size(), ranges = (n + kFilesPerRange - 1) / kFilesPerRange;
    wheels::WheelInstall placing(work[k].cached, placements[k], scheme, ranges > 1 ? cores : 1);
    const auto groups = placing.groups_by_directory(ranges > 1 ? kFilesPerRange : n);
    util::parallel_for(groups.size(), cores, [&](std::size_t g) { placing.place_files(groups[g], linker); });
    placing.finish(linker);
  };
  std::vector<std::size_t> changed;  // wheels whose cache entry was found changed as its files were placed
  util::parallel_for(work.size(), jobs, [&](std::size_t i) {
    try {
      install(by_files[i]);
    } catch (const wheels::SourceChanged&) {
      std::lock_guard lock(warn_mutex);
      changed.push_back(by_files[i]);
    }
  });
  // An entry edited since it was unpacked (through a hardlink from an environment) must not reach another
  // environment: unpacked again from its verified wheel, and its files placed again over what was placed.
  for (const std::size_t k : changed) {
    const SelectedWheel& w = *work[k].wheel;
    const auto edited = cache.changed_files(work[k].cached);
    result.warnings.push_back("the cache's copy of " + w.wheel.wheel.filename + " had " +
                              plural(edited.size(), "file") +
                              " changed since it was unpacked (first: " + (edited.empty() ? "" : edited.front()) +
                              "; an edit through a hardlink?); unpacked again from the verified wheel");
    cache.evict(w.sha256());
    work[k].cached = cache.unpacked(w.sha256(), wheel_file_of(w));
    judge_record(work[k]);
    placements[k] = plan_install(work[k].cached, w.wheel.wheel.filename, scheme);
    try {
      install(k);
    } catch (const wheels::SourceChanged& e) {
      throw Error(ExitCode::check_failed, std::string(e.what()) + " again, while its wheel was being placed from " +
                                              "a fresh unpack: something is writing into the cache");
    }
  }
  trace_phase(phase, "create: " + plural(work.size(), "wheel") + " installed");
  for (auto& job : work) result.installed.push_back(job.wheel->name.as_written() + "==" + job.wheel->version.str());
  for (const auto& k : plan.keeps) result.unchanged.push_back(k.wheel.name.as_written() + "==" + k.wheel.version.str());
  if (!work.empty()) result.link_mode = link_mode_name(linker.mode());
  // The fallback belongs to the cache's file system: said once per cache.
  if (auto w = linker.warning(); !w.empty() && cache.first_fallback_notice(std::string(link_mode_name(o.link_mode)) +
                                                                           ">" + link_mode_name(linker.mode())))
    result.warnings.insert(result.warnings.begin(), w + " (said once for this cache)");

  if (o.compile && !work.empty()) {
    util::RunOptions run_options;
    run_options.stderr_to = util::StderrTo::inherit;
    int rc = util::shell_status(
        util::run({layout.python.string(), "-m", "compileall", "-q", "-j0", layout.purelib.string()}, run_options));
    if (rc != 0) result.warnings.push_back("bytecode compilation exited with status " + std::to_string(rc));
  }
  return result;
}

PlanReading read_plan_inputs(const CreateOptions& o) {
  const unsigned jobs = o.jobs ? o.jobs : util::default_jobs();
  auto phase = std::chrono::steady_clock::now();
  PlanReading reading{query_interpreter(o.python, o.cache_dir), {}, {}, {}};
  const Interpreter& it = reading.interpreter;
  trace_phase(phase, "create: interpreter asked");
  WheelCache cache(o.cache_dir);
  PlanInputs& in = reading.inputs;
  in.env = o.env;
  in.lock = read_lock(o.lock);
  in.markers = it.markers;
  in.selection = o.selection;
  in.tags = compatible_tags(tag_inputs(it));
  in.allow_empty = o.allow_empty;
  // The entries plan_env will select: only their wheels are looked for and hashed.
  const auto entries = applicable_entries(in.lock, in.markers, in.selection);

  std::vector<fs::path> find_links = o.find_links;
  for (const auto& f : in.lock.find_links) find_links.emplace_back(f);
  std::vector<std::string> index_urls = o.index_urls;
  if (index_urls.empty()) index_urls = in.lock.index_urls;
  const auto local = scan_find_links(find_links);

  std::vector<std::vector<WheelCandidate>> offered(entries.size());
  util::parallel_for(entries.size(), jobs, [&](std::size_t i) {
    offered[i] = gather_candidates(entries[i], in.lock, local, index_urls);
    hash_candidates(entries[i], offered[i], in.tags, cache, downloads_of(o));
  });
  trace_phase(phase,
              "create: lock read, the wheels of its " + std::to_string(entries.size()) + " entries found and hashed");
  std::vector<std::string> allowed;  // the hashes plan_env may choose, for the cache's state
  for (std::size_t i = 0; i < entries.size(); ++i) {
    for (const auto& c : offered[i]) {
      auto sha = choice_hash(c);
      const auto& ok = entries[i].sha256;
      if (!sha.empty() && std::find(ok.begin(), ok.end(), sha) != ok.end()) allowed.push_back(sha);
    }
    in.candidates[normalize_name(entries[i].name)] = std::move(offered[i]);
  }

  // What the environment holds now (nothing is changed before the plan is carried out).
  reading.layout = venv_layout(o.env, it);
  const VenvLayout& layout = reading.layout;
  std::vector<InstalledDist> installed;
  std::error_code ec;
  if (fs::is_directory(layout.purelib, ec)) installed = list_installed(layout.purelib);
  if (layout.platlib != layout.purelib && fs::is_directory(layout.platlib, ec))
    for (auto& d : list_installed(layout.platlib)) installed.push_back(d);
  in.installed.resize(installed.size());
  const util::Root env_root(layout.root);
  util::parallel_for(installed.size(), jobs, [&](std::size_t i) {
    InstalledState& s = in.installed[i];
    s.dist = installed[i];
    if (!wants_file_check(s.dist, entries)) return;
    s.files = check_dist(layout.root, s.dist, nullptr);
    try {
      s.record = read_record_hashes(env_root, s.dist);
    } catch (const Error&) {
      // An unreadable RECORD is drift, and check_dist has said so; there is nothing to compare.
    }
  });

  trace_phase(phase, "create: " + plural(installed.size(), "installed distribution") + " read");
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  // The wheels an installed distribution may be kept for (the lock pins it at the installed version): where
  // the cache has not unpacked one, the wheel's own RECORD is what the installed files are compared with.
  std::map<std::string, fs::path> to_compare;  // sha256 -> the local file (empty: the cache's download, if any)
  for (const auto& e : entries) {
    bool installed_here = std::any_of(in.installed.begin(), in.installed.end(), [&](const InstalledState& s) {
      return s.files && PackageName(s.dist.name) == PackageName(e.name);
    });
    auto offered_here = in.candidates.find(normalize_name(e.name));
    if (!installed_here || offered_here == in.candidates.end()) continue;
    for (const auto& c : offered_here->second) {
      auto sha = choice_hash(c);
      if (std::find(e.sha256.begin(), e.sha256.end(), sha) != e.sha256.end()) to_compare.emplace(sha, c.local);
    }
  }
  // The largest wheels' entries first: torch's files.json (15,000 files) is the longest read of the phase.
  std::map<std::string, std::uint64_t> wheel_size;
  for (const auto& [name, offered_here] : in.candidates)
    for (const auto& c : offered_here) {
      std::error_code size_ec;
      const auto size = c.size ? *c.size : c.local.empty() ? 0 : fs::file_size(c.local, size_ec);
      if (!choice_hash(c).empty() && !size_ec) wheel_size[choice_hash(c)] = size;
    }
  auto size_of = [&](const std::string& sha) {
    auto it = wheel_size.find(sha);
    return it == wheel_size.end() ? std::uint64_t{0} : it->second;
  };
  std::stable_sort(allowed.begin(), allowed.end(),
                   [&](const std::string& a, const std::string& b) { return size_of(a) > size_of(b); });
  std::vector<CacheState> states(allowed.size());
  std::vector<std::optional<CacheEntry>> entries_read(allowed.size());
  util::parallel_for(allowed.size(), jobs, [&](std::size_t i) {
    states[i] = cache_state(cache, allowed[i], entries_read[i]);
    auto wheel = to_compare.find(allowed[i]);
    if (states[i].unpacked || wheel == to_compare.end()) return;
    fs::path file = !wheel->second.empty() ? wheel->second
                    : states[i].downloaded ? cache.downloaded_wheel(allowed[i])
                                           : fs::path();
    if (!file.empty()) read_own_record(states[i], file);
  });
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    in.cache[allowed[i]] = std::move(states[i]);
    if (entries_read[i]) reading.cache_entries.emplace(allowed[i], std::move(*entries_read[i]));
  }
  trace_phase(phase, "create: the cache's state of " + plural(allowed.size(), "wheel") + " looked at");
  return reading;
}

nlohmann::json to_json(const CreateResult& r, const std::string& env, double seconds) {
  return {{"environment", env},     {"installed", r.installed}, {"removed", r.removed}, {"unchanged", r.unchanged},
          {"warnings", r.warnings}, {"link_mode", r.link_mode}, {"seconds", seconds},   {"plan", to_json(r.plan)}};
}

}  // namespace provkit::pyenv
