// envbuild create's plan (plan_env), decision by decision as uv's planner tests go: each case builds the
// inputs as values (a lock read from text, an interpreter's markers and tags, the wheels offered, the
// installed set, what the cache holds) and checks the decision and its reason. No file is touched.
#include <catch2/catch.hpp>

#include "provkit/error.hpp"
#include "provkit/pyenv/create.hpp"
#include "provkit/pyenv/plan.hpp"
#include "provkit/pyspec/lock.hpp"

using namespace provkit::pyenv;
using namespace provkit::pyspec;
using namespace provkit::wheels;

namespace {

std::string H(char c) { return std::string(64, c); }

const std::map<std::string, std::string> kLinux312 = {
    {"python_version", "3.12"},     {"python_full_version", "3.12.1"},  {"sys_platform", "linux"},
    {"platform_machine", "x86_64"}, {"implementation_name", "cpython"}, {"os_name", "posix"},
    {"platform_system", "Linux"}};

const std::vector<std::string> kTags = {"cp312-cp312-manylinux_2_17_x86_64",
                                        "cp312-abi3-manylinux_2_17_x86_64",
                                        "cp312-none-manylinux_2_17_x86_64",
                                        "py3-none-manylinux_2_17_x86_64",
                                        "cp312-none-any",
                                        "py3-none-any"};

// A wheel offered by an index, its hash stated.
WheelCandidate offered(const std::string& filename, const std::string& sha256) {
  WheelCandidate c;
  c.wheel = *parse_wheel_name(filename);
  c.url = "https://index.test/" + filename;
  c.sha256 = sha256;
  return c;
}

// A wheel in a find-links directory, hashed by the reader.
WheelCandidate local(const std::string& filename, const std::string& hashed) {
  WheelCandidate c;
  c.wheel = *parse_wheel_name(filename);
  c.local = "/wheels/" + filename;
  c.hashed = hashed;
  return c;
}

// The files a tiny wheel "NAME-VERSION" unpacks to, as RECORD-form hashes: `content` decides the hash of the
// module, so two wheels of one version can differ.
std::map<std::string, std::string> wheel_files(const std::string& name, const std::string& version,
                                               const std::string& content) {
  const std::string di = name + "-" + version + ".dist-info/";
  return {{name + "/__init__.py", "sha256=" + content},
          {di + "METADATA", "sha256=meta-" + name + version},
          {di + "WHEEL", "sha256=wheel"},
          {di + "RECORD", "sha256=record-of-the-wheel"},
          {name + "-" + version + ".data/scripts/tool", "sha256=script"}};
}

CacheState unpacked(const std::string& name, const std::string& version, const std::string& content) {
  CacheState c;
  c.unpacked = true;
  c.dist_info = name + "-" + version + ".dist-info";
  c.files = wheel_files(name, version, content);
  return c;
}

// A distribution installed from the wheel wheel_files() describes, clean: its RECORD as an installer writes
// it (the module and dist-info as in the wheel; the script moved to bin/ and rewritten; INSTALLER added;
// bytecode pip compiled).
InstalledState installed(const std::string& name, const std::string& version, const std::string& content) {
  InstalledState s;
  s.dist = {name, version, "/env/lib/python3.12/site-packages/" + name + "-" + version + ".dist-info"};
  s.files = DistCheck{};
  const std::string di = name + "-" + version + ".dist-info/";
  s.record = std::map<std::string, std::string>{{name + "/__init__.py", "sha256=" + content},
                                                {name + "/__pycache__/__init__.cpython-312.pyc", "sha256=pyc"},
                                                {di + "METADATA", "sha256=meta-" + name + version},
                                                {di + "WHEEL", "sha256=wheel"},
                                                {di + "INSTALLER", "sha256=installer"},
                                                {"../../../bin/tool", "sha256=rewritten-script"}};
  return s;
}

PlanInputs inputs(const std::string& lock_text) {
  PlanInputs in;
  in.env = "/env";
  in.lock = parse_requirements(lock_text, "lock.txt");
  in.markers = kLinux312;
  in.tags = kTags;
  return in;
}

std::string line(const std::string& name, const std::string& version, const std::string& sha,
                 const std::string& marker = "") {
  return name + "==" + version + (marker.empty() ? "" : " ; " + marker) + " --hash=sha256:" + sha + "\n";
}

template <class F>
provkit::Error refusal(F&& f) {
  try {
    f();
  } catch (const provkit::Error& e) {
    return e;
  }
  FAIL("no refusal");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("plan: a fresh environment installs every selected wheel", "[python][plan]") {
  auto in = inputs(line("a", "1.0", H('1')) + line("b", "2.0", H('2')));
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1'))};
  in.candidates["b"] = {offered("b-2.0-py3-none-any.whl", H('2'))};
  in.cache[H('1')] = unpacked("a", "1.0", "A");
  auto plan = plan_env(in);
  REQUIRE(plan.installs.size() == 2);
  CHECK(plan.reinstalls.empty());
  CHECK(plan.removals.empty());
  CHECK(plan.keeps.empty());
  CHECK(plan.installs[0].wheel.name.normalized() == "a");
  CHECK(plan.installs[0].wheel.version == PackageVersion("1.0"));
  CHECK(plan.installs[0].wheel.sha256() == H('1'));
  CHECK(plan.installs[0].fetch.step == CacheStep::use_unpacked);
  CHECK(plan.installs[0].fetch.source == WheelSource::local_file);
  CHECK(plan.installs[1].fetch.step == CacheStep::unpack);
  CHECK(plan.installs[1].fetch.source == WheelSource::download);
  in.cache[H('2')].downloaded = true;
  CHECK(plan_env(in).installs[1].fetch.source == WheelSource::downloaded);
  CHECK_FALSE(plan.nothing_to_do());
  REQUIRE(plan.selected.size() == 2);
  CHECK(plan.selected[1].wheel.wheel.filename == "b-2.0-py3-none-any.whl");
}

TEST_CASE("plan: an environment that holds the chosen wheel's files is kept", "[python][plan]") {
  auto in = inputs(line("a", "1.0", H('1')));
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1'))};
  in.cache[H('1')] = unpacked("a", "1.0", "A");
  in.installed = {installed("a", "1.0", "A")};
  auto plan = plan_env(in);
  REQUIRE(plan.keeps.size() == 1);
  CHECK(plan.keeps[0].installed.version == "1.0");
  CHECK(plan.nothing_to_do());
  // The same version spelled another way, and the name in another spelling, are the same.
  in.installed[0].dist.name = "A";
  in.installed[0].dist.version = "1.0.0";
  CHECK(plan_env(in).keeps.size() == 1);
}

TEST_CASE("plan: another installed version is reinstalled, version_differs", "[python][plan]") {
  auto in = inputs(line("a", "1.1", H('1')));
  in.candidates["a"] = {local("a-1.1-py3-none-any.whl", H('1'))};
  in.installed = {installed("a", "1.0", "A")};
  auto plan = plan_env(in);
  REQUIRE(plan.reinstalls.size() == 1);
  CHECK(plan.reinstalls[0].reason == ReinstallReason::version_differs);
  CHECK(plan.reinstalls[0].installed.version == "1.0");
  CHECK(plan.reinstalls[0].wheel.version.str() == "1.1");
  CHECK(plan.removals.empty());
  CHECK(plan.installs.empty());
}

TEST_CASE("plan: the same version from another wheel is reinstalled, hash_differs", "[python][plan]") {
  // The lock now pins a rebuilt wheel of a 1.0 (another hash, another module); the cache holds it.
  auto in = inputs(line("a", "1.0", H('2')));
  in.candidates["a"] = {local("a-1.0-1-py3-none-any.whl", H('2'))};
  in.cache[H('2')] = unpacked("a", "1.0", "REBUILT");
  in.installed = {installed("a", "1.0", "A")};
  auto plan = plan_env(in);
  REQUIRE(plan.reinstalls.size() == 1);
  CHECK(plan.reinstalls[0].reason == ReinstallReason::hash_differs);
  CHECK(plan.reinstalls[0].detail == "a/__init__.py");
  CHECK(plan.reinstalls[0].fetch.step == CacheStep::use_unpacked);
  // A wheel with one file more is another wheel too.
  in.cache[H('2')] = unpacked("a", "1.0", "A");
  in.cache[H('2')].files["a/extra.py"] = "sha256=x";
  auto extra = plan_env(in);
  REQUIRE(extra.reinstalls.size() == 1);
  CHECK(extra.reinstalls[0].detail == "a/extra.py");
  // Not in the cache: nothing to compare the installed files with, so it is installed from the wheel.
  in.cache.clear();
  auto uncached = plan_env(in);
  REQUIRE(uncached.reinstalls.size() == 1);
  CHECK(uncached.reinstalls[0].reason == ReinstallReason::not_in_cache);
  CHECK(uncached.reinstalls[0].fetch.step == CacheStep::unpack);
}

TEST_CASE("plan: with the cache wiped, the wheel's own RECORD decides keep or hash_differs", "[python][plan]") {
  // The wheel is at hand (a local file) but not unpacked: its RECORD, read from the zip, says what its files are.
  auto in = inputs(line("a", "1.0", H('1')));
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1'))};
  in.installed = {installed("a", "1.0", "A")};
  CacheState own;
  own.from_wheel_record = true;
  own.dist_info = "a-1.0.dist-info";
  own.files = wheel_files("a", "1.0", "A");
  own.files.erase("a-1.0.dist-info/RECORD");  // a RECORD lists itself without a hash
  in.cache[H('1')] = own;
  auto kept = plan_env(in);
  CHECK(kept.reinstalls.empty());
  REQUIRE(kept.keeps.size() == 1);
  CHECK(kept.keeps[0].installed.name == "a");
  // The installed files are another wheel's: reinstalled, unpacked from the wheel (nothing in the cache to use).
  in.cache[H('1')].files = wheel_files("a", "1.0", "REBUILT");
  auto other = plan_env(in);
  REQUIRE(other.reinstalls.size() == 1);
  CHECK(other.reinstalls[0].reason == ReinstallReason::hash_differs);
  CHECK(other.reinstalls[0].detail == "a/__init__.py");
  CHECK(other.reinstalls[0].fetch.step == CacheStep::unpack);
  // Neither unpacked nor read: still not_in_cache.
  in.cache[H('1')].from_wheel_record = false;
  auto unread = plan_env(in);
  REQUIRE(unread.reinstalls.size() == 1);
  CHECK(unread.reinstalls[0].reason == ReinstallReason::not_in_cache);
}

TEST_CASE("plan: drifted files are reinstalled and the cache entry unpacked again", "[python][plan]") {
  auto in = inputs(line("a", "1.0", H('1')));
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1'))};
  in.cache[H('1')] = unpacked("a", "1.0", "A");
  in.installed = {installed("a", "1.0", "A")};
  in.installed[0].files->modified = {"a/__init__.py"};
  auto plan = plan_env(in);
  REQUIRE(plan.reinstalls.size() == 1);
  CHECK(plan.reinstalls[0].reason == ReinstallReason::files_drifted);
  CHECK(plan.reinstalls[0].detail == "a/__init__.py");
  CHECK(plan.reinstalls[0].fetch.step == CacheStep::unpack_again_drifted);
  CHECK(plan.reinstalls[0].fetch.source == WheelSource::local_file);
}

TEST_CASE("plan: a distribution whose lock entry's marker is false is removed, marker_false", "[python][plan]") {
  auto in = inputs(line("a", "1.0", H('1')) + line("winonly", "3.0", H('3'), "sys_platform == 'win32'"));
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1'))};
  in.cache[H('1')] = unpacked("a", "1.0", "A");
  in.installed = {installed("a", "1.0", "A"), installed("winonly", "3.0", "W")};
  auto plan = plan_env(in);
  REQUIRE(plan.removals.size() == 1);
  CHECK(plan.removals[0].installed.name == "winonly");
  CHECK(plan.removals[0].reason == RemovalReason::marker_false);
  CHECK(plan.removals[0].lock_line == 2);
  CHECK(plan.keeps.size() == 1);
}

TEST_CASE("plan: a package dropped from the lock, and one the lock never named, are removed", "[python][plan]") {
  auto in = inputs(line("a", "1.0", H('1')));
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1'))};
  in.cache[H('1')] = unpacked("a", "1.0", "A");
  // "dropped" was in the previous lock; "Extra_Tool" was installed by hand (pip), spelled its own way.
  in.installed = {installed("a", "1.0", "A"), installed("dropped", "1.0", "D"), installed("Extra_Tool", "0.1", "E")};
  in.installed[1].files.reset();  // not pinned by the lock: never read
  in.installed[2].files.reset();
  auto plan = plan_env(in);
  REQUIRE(plan.removals.size() == 2);
  for (const auto& r : plan.removals) CHECK(r.reason == RemovalReason::not_in_lock);
  CHECK(plan.removals[0].installed.name == "dropped");
  CHECK(plan.removals[1].installed.name == "Extra_Tool");
  CHECK(plan.keeps.size() == 1);
  CHECK(wants_file_check(in.installed[0].dist, applicable_entries(in.lock, kLinux312)));
  CHECK_FALSE(wants_file_check(in.installed[1].dist, applicable_entries(in.lock, kLinux312)));
}

TEST_CASE("plan: a lock that selects nothing would empty the environment: refused unless allowed", "[python][plan]") {
  auto in = inputs(line("winonly", "3.0", H('3'), "sys_platform == 'win32'"));
  in.installed = {installed("winonly", "3.0", "W"), installed("other", "1.0", "O")};
  auto e = refusal([&] { plan_env(in); });
  CHECK(e.is(CreateRefusal::would_empty));
  CHECK(e.code() == provkit::ExitCode::usage);
  CHECK(e.reason().name() == "invalid_input");  // the --json reason it always had
  CHECK_THAT(std::string(e.what()),
             Catch::Contains("lock.txt: the lock selects no distribution") && Catch::Contains("holds 2"));
  CHECK_THAT(std::string(e.what()), !Catch::Contains("--allow-empty"));  // the tool names its flag
  in.allow_empty = true;
  auto plan = plan_env(in);
  REQUIRE(plan.removals.size() == 2);
  CHECK(plan.removals[0].reason == RemovalReason::not_in_lock);   // other
  CHECK(plan.removals[1].reason == RemovalReason::marker_false);  // winonly
  // An empty environment and an empty selection: nothing to do, nothing refused.
  in.allow_empty = false;
  in.installed.clear();
  CHECK(plan_env(in).nothing_to_do());
}

TEST_CASE("plan: the wheel with the best tag wins; none compatible is a typed refusal", "[python][plan]") {
  auto in = inputs("a==1.0 --hash=sha256:" + H('1') + " --hash=sha256:" + H('2') + " --hash=sha256:" + H('3') + "\n");
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1')),
                        local("a-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", H('2')),
                        local("a-1.0-cp312-abi3-manylinux_2_17_x86_64.whl", H('3'))};
  auto plan = plan_env(in);
  REQUIRE(plan.installs.size() == 1);
  CHECK(plan.installs[0].wheel.wheel.wheel.filename == "a-1.0-cp312-cp312-manylinux_2_17_x86_64.whl");
  CHECK(plan.installs[0].wheel.sha256() == H('2'));

  in.candidates["a"] = {local("a-1.0-cp27-cp27mu-linux_x86_64.whl", H('1')),
                        local("a-1.0-cp312-cp312-win_amd64.whl", H('2'))};
  auto e = refusal([&] { plan_env(in); });
  CHECK(e.is(CreateRefusal::no_compatible_wheel));
  CHECK(e.code() == provkit::ExitCode::check_failed);
  CHECK_THAT(std::string(e.what()),
             Catch::Contains("no compatible wheel for a==1.0") &&
                 Catch::Contains("a-1.0-cp27-cp27mu-linux_x86_64.whl, a-1.0-cp312-cp312-win_amd64.whl") &&
                 Catch::Contains("(6 tags in all)"));
  in.candidates.clear();
  CHECK_THAT(std::string(refusal([&] { plan_env(in); }).what()), Catch::Contains("wheels seen: none"));
}

TEST_CASE("plan: a package with only an sdist is refused when selected, naming its line", "[python][plan]") {
  PlanInputs in;
  in.markers = kLinux312;
  in.tags = kTags;
  in.lock = parse_pylock(
      "lock-version = \"1.0\"\ncreated-by = \"t\"\n[[packages]]\nname = \"src\"\nversion = \"1\"\n"
      "sdist = { url = \"https://x/src-1.tar.gz\", hashes = { sha256 = \"" +
          H('1') + "\" } }\n",
      "pylock.toml");
  auto e = refusal([&] { plan_env(in); });
  CHECK(e.is(provkit::pyspec::LockRefusal::unsupported));
  CHECK(e.code() == provkit::ExitCode::usage);
  CHECK(e.reason().name() == "invalid_input");  // --json's name, as before the reason was typed
  CHECK_THAT(std::string(e.what()), Catch::StartsWith("pylock.toml:3: "));
  // For another platform it is not selected, and nothing is refused.
  in.lock.entries[0].marker = "sys_platform == 'win32'";
  CHECK(plan_env(in).selected.empty());
}

TEST_CASE("plan: each decision is described with its reason, and written as JSON", "[python][plan]") {
  auto in = inputs(line("a", "1.1", H('1')) + line("b", "1.0", H('2')) + line("c", "1.0", H('3')));
  in.candidates["a"] = {local("a-1.1-py3-none-any.whl", H('1'))};
  in.candidates["b"] = {local("b-1.0-py3-none-any.whl", H('2'))};
  in.candidates["c"] = {local("c-1.0-py3-none-any.whl", H('3'))};
  in.cache[H('2')] = unpacked("b", "1.0", "B");
  in.installed = {installed("a", "1.0", "A"), installed("b", "1.0", "B"), installed("gone", "2.0", "G")};
  auto plan = plan_env(in);
  auto lines = describe(plan);
  REQUIRE(lines.size() == 4);
  CHECK_THAT(lines[0], Catch::StartsWith("plan: install c 1.0 (c-1.0-py3-none-any.whl): not installed"));
  CHECK_THAT(lines[1], Catch::StartsWith("plan: reinstall a 1.1 (a-1.1-py3-none-any.whl): version_differs: 1.0 is "
                                         "installed"));
  CHECK(lines[2] == "plan: remove gone 2.0: not_in_lock: no lock entry names it");
  CHECK_THAT(lines[3], Catch::StartsWith("plan: keep b 1.0"));
  auto j = to_json(plan);
  CHECK(j["install"][0] ==
        nlohmann::json({{"name", "c"}, {"version", "1.0"}, {"wheel", "c-1.0-py3-none-any.whl"}, {"sha256", H('3')}}));
  CHECK(j["reinstall"][0]["reason"] == "version_differs");
  CHECK(j["reinstall"][0]["installed_version"] == "1.0");
  CHECK(j["remove"][0] == nlohmann::json({{"name", "gone"}, {"version", "2.0"}, {"reason", "not_in_lock"}}));
  CHECK(j["keep"][0]["name"] == "b");
}

TEST_CASE("choose_wheel: hashes are asked best tag first, only until one is allowed", "[python][plan]") {
  LockEntry e;
  e.name = "A_B";
  e.version = "1.0";
  e.sha256 = {H('2')};
  std::vector<WheelCandidate> cands = {offered("a_b-1.0-py3-none-any.whl", H('1')),
                                       offered("a_b-1.0.0-cp312-abi3-manylinux_2_17_x86_64.whl", ""),
                                       offered("a_b-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", ""),
                                       offered("other-1.0-py3-none-any.whl", H('2'))};
  std::vector<std::string> asked;
  auto chosen = choose_wheel(e, cands, kTags, [&](const WheelCandidate& c) {
    asked.push_back(c.wheel.filename);
    return c.wheel.filename.find("cp312-cp312") != std::string::npos ? H('9') : H('2');
  });
  // The name normalised (A_B is a-b), 1.0.0 the same version, best tag first, stopped at the first allowed.
  CHECK(asked == std::vector<std::string>{"a_b-1.0-cp312-cp312-manylinux_2_17_x86_64.whl",
                                          "a_b-1.0.0-cp312-abi3-manylinux_2_17_x86_64.whl"});
  CHECK(chosen.wheel.filename == "a_b-1.0.0-cp312-abi3-manylinux_2_17_x86_64.whl");
  CHECK(chosen.sha256 == H('2'));

  auto e2 = refusal([&] { choose_wheel(e, cands, kTags, [&](const WheelCandidate&) { return H('7'); }); });
  CHECK(e2.is(CreateRefusal::hash_not_locked));
  CHECK_THAT(std::string(e2.what()), Catch::Contains("no wheel for A_B==1.0 matches the lock's hashes: "
                                                     "a_b-1.0-cp312-cp312-manylinux_2_17_x86_64.whl has sha256 " +
                                                     H('7')));
  CHECK(rank_wheels(e, cands, {"py3-none-any"}).size() == 1);
  CHECK(rank_wheels(e, cands, {}).empty());
}

TEST_CASE("choice_hash: a local file by its own bytes, a URL by its stated hash", "[python][plan]") {
  auto l = local("a-1.0-py3-none-any.whl", H('1'));
  l.sha256 = H('2');  // what a pylock says of the file: not proof
  CHECK(choice_hash(l) == H('1'));
  l.hashed.clear();
  CHECK(choice_hash(l).empty());
  auto u = offered("a-1.0-py3-none-any.whl", H('3'));
  CHECK(choice_hash(u) == H('3'));
  u.sha256.clear();
  u.hashed = H('4');  // an index file without a fragment, downloaded to learn it
  CHECK(choice_hash(u) == H('4'));
}

TEST_CASE("create --json keeps its name==version strings and adds the typed plan", "[python][plan]") {
  auto in = inputs(line("a", "1.0", H('1')) + line("b", "2.0", H('2')));
  in.candidates["a"] = {local("a-1.0-py3-none-any.whl", H('1'))};
  in.candidates["b"] = {local("b-2.0-py3-none-any.whl", H('2'))};
  in.cache[H('2')] = unpacked("b", "2.0", "B");
  in.installed = {installed("b", "2.0", "B"), installed("old", "0.1", "O")};
  CreateResult r;
  r.plan = plan_env(in);
  r.installed = {"a==1.0"};
  r.removed = {"old==0.1"};
  r.unchanged = {"b==2.0"};
  auto j = to_json(r, "ENV", 0.5);
  CHECK(j["installed"] == nlohmann::json::array({"a==1.0"}));
  CHECK(j["unchanged"] == nlohmann::json::array({"b==2.0"}));
  CHECK(j["plan"]["install"][0]["name"] == "a");
  CHECK(j["plan"]["remove"][0]["reason"] == "not_in_lock");
  CHECK(j["plan"]["keep"][0]["sha256"] == H('2'));
}
