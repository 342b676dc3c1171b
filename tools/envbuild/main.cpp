// envbuild: isolated Python environments built from a hashed lock. Parses flags, calls the pyenv
// domain, prints; provkit::Error becomes one sentence on stderr and its exit code.
#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "provkit/cli/convention.hpp"
#include "provkit/cli/output.hpp"
#include "provkit/error.hpp"
#include "provkit/pyenv/capture.hpp"
#include "provkit/pyenv/create.hpp"
#include "provkit/pyenv/diff.hpp"
#include "provkit/pyenv/dirs.hpp"
#include "provkit/pyenv/interpreter_install.hpp"
#include "provkit/pyenv/venv.hpp"
#include "provkit/pyenv/verify.hpp"
#include "provkit/pyfind/discovery.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/text.hpp"

using namespace provkit;

namespace {

void warn(const std::string& message) { std::cerr << cli::sentence("envbuild", "warning: " + message); }

// Names from a lock, a wheel or an environment's files, for plain output (util::printable).
std::string shown(const std::string& name) { return util::printable(name); }

struct Args {
  std::string cache_dir, python_dir;                   // the global --cache-dir and --python-dir
  std::string env, python, lock, link_mode = "clone";  // create, verify
  pyenv::CreateOptions create;                         // create's other flags, bound as they are
  std::vector<std::string> extras, groups;
  bool no_default_groups = false, json = false;
  std::string source, wheelhouse, a, b, sha256;  // capture, diff, python
  std::string progress = "lines";                // create: lines or none
  int progress_interval_s = 10;
  int env_wait_s = 300;  // create, verify: how long to wait for the environment's lock
};

// The environment's lock, taken before anything in it is read (create: exclusive; verify: shared); a run
// that must wait says so once on stderr.
pyenv::EnvLock lock_env(const Args& a, pyenv::EnvLock::Mode mode) {
  return pyenv::EnvLock::take(a.env, mode, std::chrono::seconds(a.env_wait_s), [&](long pid) {
    std::cerr << cli::sentence("envbuild", a.env + " is in use by another run" +
                                               (pid ? " (pid " + std::to_string(pid) + ")" : std::string()) +
                                               "; waiting up to " + std::to_string(a.env_wait_s) + " s for its lock");
  });
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << s << " s";
  return out.str();
}

// create's download lines on stderr, for a log as much as a terminal: every --progress-interval seconds a
// line for each wheel still downloading, and one when a wheel is in (pip's "Downloading" lines, hf-fetch's
// --progress lines). The workers download in parallel: every event takes the lock.
class DownloadLines : public download::Observer {
 public:
  explicit DownloadLines(int interval_s) : interval_(std::chrono::seconds(interval_s)) {}
  void on_start(const download::Job& job, std::uint64_t resume_from, std::size_t) override {
    std::lock_guard lock(mutex_);
    auto now = Clock::now();
    active_[job.spec.path] = {now, now, resume_from};
  }
  void on_progress(const download::Job& job, std::uint64_t have) override {
    std::lock_guard lock(mutex_);
    auto it = active_.find(job.spec.path);
    auto now = Clock::now();
    if (it == active_.end() || now - it->second.last_line < interval_) return;
    it->second.last_line = now;
    std::string line = shown(job.spec.path) + ": " + util::format_size(have);
    if (job.spec.size)
      line += " of " + util::format_size(job.spec.size) + " (" + std::to_string(have * 100 / job.spec.size) + "%)";
    std::cerr << cli::sentence("envbuild", line + ", " + rate(it->second, have, now));
  }
  void on_retry(const download::Job& job, const std::string& why, double delay_s) override {
    std::lock_guard lock(mutex_);
    std::cerr << cli::sentence("envbuild", shown(job.spec.path) + ": " + why + "; again in " + seconds_text(delay_s));
  }
  void on_finish(const download::Job& job, const download::JobResult& r) override {
    std::lock_guard lock(mutex_);
    auto it = active_.find(job.spec.path);
    if (r.outcome == download::Outcome::downloaded && it != active_.end())
      std::cerr << cli::sentence("envbuild", "downloaded " + shown(job.spec.path) + " (" +
                                                 util::format_size(job.spec.size) + ", " +
                                                 rate(it->second, job.spec.size, Clock::now()) + ")");
    if (it != active_.end()) active_.erase(it);
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Transfer {
    Clock::time_point started, last_line;
    std::uint64_t from = 0;  // bytes kept from an earlier run
  };
  static std::string rate(const Transfer& t, std::uint64_t have, Clock::time_point now) {
    double s = std::chrono::duration<double>(now - t.started).count();
    std::string out = seconds_text(s);
    if (s > 0 && have > t.from) out += ", " + util::format_size(static_cast<std::uint64_t>((have - t.from) / s)) + "/s";
    return out;
  }
  Clock::duration interval_;
  std::mutex mutex_;
  std::map<std::string, Transfer> active_;
};

// The words of a bad RECORD let through by --allow-bad-record.
std::string bad_record_warning(const pyenv::BadRecord& b) {
  return b.wheel + " has a bad RECORD (" + std::to_string(b.problems) + " problem" + (b.problems > 1 ? "s" : "") +
         ", first: " + b.first + "); installed because of --allow-bad-record";
}

// The flag that would have let a refused create through, said after the library's sentence.
std::string flag_hint(const Error& e) {
  if (e.is(pyenv::CreateRefusal::would_empty)) return "; --allow-empty empties the environment";
  if (e.is(pyenv::CreateRefusal::bad_record)) return "; --allow-bad-record installs it anyway";
  return "";
}

int create_locked(Args& a, std::chrono::steady_clock::time_point start);

// Where --python is looked for and `python install` installs: the environment's variables
// (pyfind::environment_variables), --python-dir over ENVBUILD_PYTHON_DIR.
pyfind::Environment python_search(const Args& a) {
  auto env = pyfind::Environment::read(util::env_value_named);
  if (!a.python_dir.empty()) env.managed_dir = a.python_dir;
  return env;
}

int create(Args a) {
  auto start = std::chrono::steady_clock::now();
  pyenv::EnvLock env_lock = lock_env(a, pyenv::EnvLock::Mode::exclusive);
  try {
    return create_locked(a, start);
  } catch (...) {
    env_lock.remove_if_only_lock();  // a refused create into a new directory leaves nothing
    throw;
  }
}

int create_locked(Args& a, std::chrono::steady_clock::time_point start) {
  pyenv::CreateOptions& o = a.create;
  o.env = a.env;
  try {
    o.python = pyfind::find_python(a.python, python_search(a)).executable;
  } catch (const Error& e) {
    throw Error(e, std::string("--python: ") + e.what());  // the library's sentence names the value, not the flag
  }
  o.lock = a.lock;
  o.selection = {a.extras, a.groups, a.no_default_groups};
  o.cache_dir = pyenv::wheel_cache_dir(a.cache_dir);
  o.link_mode = wheels::parse_link_mode(a.link_mode).value_or(wheels::LinkMode::clone);  // checked when parsed
  DownloadLines lines(a.progress_interval_s);
  if (a.progress == "lines") o.downloads = &lines;
  // Read, plan, carry out: the plan is made from what was read, without touching anything.
  pyenv::PlanReading reading = pyenv::read_plan_inputs(o);
  const pyenv::Plan plan = pyenv::plan_env(reading.inputs);
  auto r = pyenv::execute_plan(plan, reading.interpreter, reading.layout, o, std::move(reading.cache_entries));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::string> warnings = r.warnings;
  for (auto& b : r.bad_records) warnings.push_back(bad_record_warning(b));
  for (auto& w : warnings) warn(w);
  if (a.json) {
    auto fields = pyenv::to_json(r, a.env, secs);
    fields["warnings"] = warnings;
    cli::JsonLines("envbuild").summary(0, std::nullopt, fields);
  } else if (r.plan.nothing_to_do()) {
    std::cout << shown(a.env) << " already matches the lock (" << r.plan.keeps.size() << " distributions)\n";
  } else {
    for (auto& s : r.removed) std::cout << "- " << shown(s) << "\n";
    for (auto& s : r.installed) std::cout << "+ " << shown(s) << "\n";
    std::cout << shown(a.env) << ": " << r.installed.size() << " installed, " << r.removed.size() << " removed, "
              << r.unchanged.size() << " unchanged in " << std::fixed << std::setprecision(2) << secs << " s"
              << (r.link_mode.empty() ? "" : " (" + r.link_mode + ")") << "\n";
  }
  return 0;
}

int verify(const Args& a) {
  const pyenv::EnvLock env_lock = lock_env(a, pyenv::EnvLock::Mode::shared);
  auto jobs = util::default_jobs();
  auto report = a.lock.empty() ? pyenv::verify_env(a.env, jobs)
                               : pyenv::verify_env(a.env, jobs, a.lock, {a.extras, a.groups, a.no_default_groups},
                                                   pyenv::wheel_cache_dir(a.cache_dir));
  if (a.json)
    return cli::JsonLines("envbuild")
        .summary(report.clean() ? 0 : 1, cli::Reason::verification_failed, pyenv::to_json(report, a.env, a.lock));
  for (auto& d : report.dists) {
    if (d.check.clean()) continue;
    std::cout << shown(d.name) << " " << shown(d.version) << ":\n";
    for (auto& p : d.check.modified) std::cout << "  modified  " << shown(p) << "\n";
    for (auto& p : d.check.missing) std::cout << "  missing   " << shown(p) << "\n";
    for (auto& p : d.check.unlisted) std::cout << "  unlisted  " << shown(p) << "\n";
    for (auto& p : d.check.outside)
      std::cout << "  outside   " << shown(p) << " (RECORD points outside the environment)\n";
    for (auto& u : d.check.unverifiable)
      std::cout << "  unverifiable  " << shown(u.path) << " (RECORD's hash " << shown(u.algorithm) << ": "
                << shown(u.why) << ")\n";
  }
  if (report.lock) {
    for (auto& s : report.lock->missing) std::cout << "not installed (in lock): " << shown(s) << "\n";
    for (auto& s : report.lock->extra) std::cout << "not in lock (installed): " << shown(s) << "\n";
    for (auto& v : report.lock->other_version)
      std::cout << "other version: " << shown(v.name) << " " << shown(v.installed) << " installed, " << shown(v.locked)
                << " locked\n";
  }
  std::cout << shown(a.env) << (report.clean() ? " verifies clean" : " has drifted") << " (" << report.dists.size()
            << " distributions)\n";
  return report.clean() ? 0 : 1;
}

int capture(const Args& a) {
  auto r = pyenv::capture_to_lock(a.source, a.wheelhouse, a.lock, util::default_jobs(),
                                  std::string("envbuild capture ") + PROVKIT_VERSION);
  for (auto& w : r.warnings) warn(w);
  for (auto& s : r.skipped) warn("skipped " + s);
  std::cout << "captured " << r.entries.size() << " distributions into " << shown(a.wheelhouse) << "; lock "
            << shown(a.lock) << (r.skipped.empty() ? "" : " (" + std::to_string(r.skipped.size()) + " skipped)")
            << "\n";
  return 0;
}

int diff(const Args& a) {
  auto rows = pyenv::diff_versions(pyenv::read_versions(a.a), pyenv::read_versions(a.b));
  auto differing = pyenv::count_differing(rows);
  if (a.json)
    return cli::JsonLines("envbuild").summary(differing ? 1 : 0, cli::Reason::differs, pyenv::to_json(rows, a.a, a.b));
  for (auto& r : rows) r.name = shown(r.name), r.a = shown(r.a), r.b = shown(r.b);
  std::string side_a = shown(a.a), side_b = shown(a.b);
  std::size_t wn = 7, wa = side_a.size(), wb = side_b.size();
  for (auto& r : rows) wn = std::max(wn, r.name.size()), wa = std::max(wa, r.a.size()), wb = std::max(wb, r.b.size());
  auto line = [&](const std::string& mark, const std::string& n, const std::string& x, const std::string& y) {
    std::cout << mark << " " << std::left << std::setw(static_cast<int>(wn)) << n << "  "
              << std::setw(static_cast<int>(wa)) << x << "  " << y << "\n";
  };
  line(" ", "package", side_a, side_b);
  for (auto& r : rows) line(r.differs ? "*" : " ", r.name, r.a.empty() ? "-" : r.a, r.b.empty() ? "-" : r.b);
  std::cout << differing << " of " << rows.size() << " differ\n";
  return differing ? 1 : 0;
}

int python_install(const Args& a) {
  auto r = pyenv::install_python(a.source, a.sha256, pyfind::managed_dir(python_search(a)),
                                 pyenv::wheel_cache_dir(a.cache_dir));
  std::cout << "Python " << shown(r.version) << (r.already ? " already installed at " : " installed at ")
            << shown(r.dir.string()) << "\n"
            << "use: --python " << shown(r.version.substr(0, r.version.rfind('.'))) << " (or "
            << shown(r.python.string()) << ")\n";
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"envbuild: build Python environments from a hashed lock, and prove later they have not drifted"};
  cli::Convention convention(app);
  app.set_version_flag("--version", std::string("envbuild ") + PROVKIT_VERSION);
  app.require_subcommand(1);
  Args a;
  auto* cache_dir = app.add_option("--cache-dir", a.cache_dir,
                                   "wheel cache (default $ENVBUILD_CACHE_DIR or ~/.cache/provkit/envbuild)");
  auto* python_dir =
      app.add_option("--python-dir", a.python_dir,
                     "managed interpreters (default $ENVBUILD_PYTHON_DIR or ~/.local/share/provkit/pythons)");

  auto* create = app.add_subcommand("create", "create or update an environment so it matches a lock");
  create->add_option("DIR", a.env, "environment directory")->required();
  create->add_option("--python", a.python, "interpreter: a path, a command, or a version such as 3.12")->required();
  create->add_option("--lock", a.lock, "requirements file with --hash=sha256:..., or pylock.toml")->required();
  create->add_option("--extra", a.extras, "install this extra of a pylock.toml (repeatable; default none)");
  create->add_option("--group", a.groups,
                     "install this dependency group of a pylock.toml (repeatable; the lock's default-groups always)");
  create->add_flag("--no-default-groups", a.no_default_groups, "leave out the pylock.toml's default-groups");
  create->add_option("--find-links,-f", a.create.find_links, "directory of wheels (repeatable)");
  create->add_option("--index-url,-i", a.create.index_urls, "simple index URL (PEP 503/691; repeatable)");
  create->add_option("--link-mode", a.link_mode, "clone (reflink, falling back), hardlink, or copy")
      ->check(CLI::Validator(
          [](const std::string& mode) -> std::string {  // read with the command line, before anything is done
            if (wheels::parse_link_mode(mode)) return {};
            return "must be clone, hardlink or copy, not '" + util::printable(mode) + "'";
          },
          "MODE"));
  create->add_flag("--allow-bad-record", a.create.allow_bad_record,
                   "install wheels whose RECORD does not match (warns)");
  create->add_flag("--allow-empty", a.create.allow_empty,
                   "let a lock that selects nothing remove every distribution of a non-empty environment");
  create->add_flag("--compile", a.create.compile, "compile bytecode after installing");
  create->add_option("--jobs,-j", a.create.jobs, "parallel workers (default: 2x cores, 4..32)");
  create->add_flag("--json", a.json, "print the result as JSON");
  create
      ->add_option("--wait", a.env_wait_s,
                   "seconds to wait while another run holds the environment's lock DIR/.lock (default 300; 0: "
                   "refuse at once)")
      ->check(CLI::Range(0, 86400));
  create
      ->add_option("--progress", a.progress,
                   "lines (on stderr: each wheel downloaded, and every --progress-interval seconds each one "
                   "still downloading) or none; default lines")
      ->check(CLI::IsMember({"lines", "none"}));
  create
      ->add_option("--progress-interval", a.progress_interval_s,
                   "seconds between the lines of a wheel still downloading (default 10, as hf-fetch's)")
      ->check(CLI::Range(1, 3600));

  auto* verify = app.add_subcommand("verify", "check every installed file against RECORD, and the set against a lock");
  verify->add_option("DIR", a.env, "environment directory")->required();
  verify->add_option("--lock", a.lock, "also compare the installed distributions with this lock");
  verify->add_option("--extra", a.extras, "the pylock.toml extras the environment was created with (repeatable)");
  verify->add_option("--group", a.groups, "the pylock.toml dependency groups it was created with (repeatable)");
  verify->add_flag("--no-default-groups", a.no_default_groups, "it was created without the lock's default-groups");
  verify->add_flag("--json", a.json, "print the report as JSON");
  verify
      ->add_option("--wait", a.env_wait_s,
                   "seconds to wait while a create holds the environment's lock (default 300; 0: refuse at once)")
      ->check(CLI::Range(0, 86400));

  auto* capture = app.add_subcommand("capture",
                                     "pack an environment's distributions back into wheels and write a hashed lock");
  capture->add_option("VENV", a.source, "environment, Python prefix, or site-packages directory")->required();
  capture->add_option("--wheelhouse", a.wheelhouse, "directory for the wheels")->required();
  capture->add_option("--lock", a.lock, "lock to write: pylock.toml (PEP 751) or a requirements file")->required();

  auto* diff = app.add_subcommand("diff",
                                  "side-by-side version table of two environments or locks (exit 1 when they differ)");
  diff->add_option("A", a.a, "environment or lock")->required();
  diff->add_option("B", a.b, "environment or lock")->required();
  diff->add_flag("--json", a.json, "print the table as JSON");

  auto* python_cmd = app.add_subcommand("python", "manage standalone CPython builds");
  python_cmd->require_subcommand(1);
  auto* install = python_cmd->add_subcommand(
      "install", "unpack a python-build-standalone archive (.tar.gz, .tar.zst) checked by sha256");
  install->add_option("ARCHIVE", a.source, "archive path or http(s) URL")->required();
  install->add_option("--sha256", a.sha256, "sha256 of the archive (hex)")->required();
  auto* find = python_cmd->add_subcommand("find", "print the interpreter --python SPEC would use");
  find->add_option("SPEC", a.python, "path, command or version such as 3.12")->required();

  // Which commands read the wheel cache and the managed interpreters (docs/envbuild.md, "Command line").
  convention.global(cache_dir, {create, verify, install});
  convention.global(python_dir, {create, install, find});
  bool debug = false;
  convention.global(
      app.add_flag("--debug", debug,
                   "trace the plan's decisions, requests and files written, on stderr (also PROVKIT_LOG=debug)"),
      {create, verify, capture, diff, install, find});
  if (auto stop = convention.parse(argc, argv)) return cli::finish(*stop, "envbuild", cli::wants_json(argc, argv));
  cli::start_trace("envbuild", debug);
  try {
    if (create->parsed()) return ::create(a);
    if (verify->parsed()) return ::verify(a);
    if (capture->parsed()) return ::capture(a);
    if (diff->parsed()) return ::diff(a);
    if (install->parsed()) return python_install(a);
    std::cout << shown(pyfind::find_python(a.python, python_search(a)).executable.string()) << "\n";
    return 0;
  } catch (const Error& e) {
    const std::string message = e.what() + flag_hint(e);
    std::cerr << cli::sentence("envbuild", message);
    if (a.json) cli::JsonLines("envbuild").summary(static_cast<int>(e.code()), e.reason(), {}, message);
    return static_cast<int>(e.code());
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return cli::last_resort("envbuild", cli::wants_json(argc, argv), e.what());
  } catch (...) {
    return cli::last_resort("envbuild", cli::wants_json(argc, argv), "an unknown exception");
  }
}
