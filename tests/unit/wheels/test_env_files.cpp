// Linking, installing and launchers against real files in a temp dir.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include "provkit/error.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/wheels/install.hpp"
#include "provkit/wheels/linker.hpp"
#include "provkit/wheels/zip.hpp"

#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit::wheels;

namespace {
using provkit::test::TempDir;
}  // namespace

TEST_CASE("linker settles on a mode on the first file and replaces existing targets", "[envbuild]") {
  TempDir t;
  provkit::util::write_file_atomic(t.path / "a", "hello");
  provkit::util::write_file_atomic(t.path / "b", "world");
  Linker hard(LinkMode::hardlink, 022);
  hard.link(t.path / "a", t.path / "x", false);
  CHECK(hard.mode() == LinkMode::hardlink);
  CHECK(fs::hard_link_count(t.path / "a") == 2);
  hard.link(t.path / "b", t.path / "x", false);  // replaces
  CHECK(provkit::util::read_file(t.path / "x") == "world");
  Linker copy(LinkMode::copy, 022);
  copy.link(t.path / "a", t.path / "y", false);
  CHECK(fs::hard_link_count(t.path / "y") == 1);
  CHECK(provkit::util::read_file(t.path / "y") == "hello");
  // clone: either reflinks, or falls back once with a warning; never both silent and wrong.
  Linker clone(LinkMode::clone, 022);
  clone.link(t.path / "a", t.path / "z", false);
  CHECK(provkit::util::read_file(t.path / "z") == "hello");
  CHECK((clone.mode() == LinkMode::clone) == clone.warning().empty());
  if (clone.mode() != LinkMode::clone)  // the warning names the mode, not envbuild's flag
    CHECK_THAT(clone.warning(), Catch::StartsWith("link mode clone is not possible from "));
  CHECK_THROWS_AS(clone.link(t.path / "missing", t.path / "w", false), provkit::Error);
}

TEST_CASE("launchers: plain shebang, /bin/sh exec form for long or spaced paths", "[envbuild]") {
  CHECK(script_shebang("/venv/bin/python") == "#!/venv/bin/python\n");
  auto spaced = script_shebang("/my venv/bin/python");
  CHECK(spaced.rfind("#!/bin/sh\n'''exec' '/my venv/bin/python' \"$0\" \"$@\"\n' '''\n", 0) == 0);
  CHECK(script_shebang("/" + std::string(130, 'x') + "/python").rfind("#!/bin/sh\n", 0) == 0);
  auto s = launcher_script("/v/bin/python", "pkg.cli:Main.run [extra]");
  CHECK(s.find("from pkg.cli import Main\n") != std::string::npos);
  CHECK(s.find("sys.exit(Main.run())") != std::string::npos);
  auto eps = script_entry_points("[console_scripts]\nfoo = a:b\n[gui_scripts]\nbar=c:d\n[other]\nx = y:z\n");
  REQUIRE(eps.size() == 2);
  CHECK(eps[1].gui);
  CHECK(eps[1].value == "c:d");
}

TEST_CASE("a link mode is read as a value; a word that is none is nothing, said by the tool", "[envbuild]") {
  CHECK(parse_link_mode("clone") == LinkMode::clone);
  CHECK(parse_link_mode("reflink") == LinkMode::clone);
  CHECK(parse_link_mode("hardlink") == LinkMode::hardlink);
  CHECK(parse_link_mode("copy") == LinkMode::copy);
  CHECK(parse_link_mode("symlink") == std::nullopt);
  CHECK(parse_link_mode("") == std::nullopt);
}

TEST_CASE("the linker takes its source by name in its directory, never through a link", "[envbuild]") {
  TempDir t;
  const fs::path secret = t.write("outside/secret", "not the cache's\n");
  fs::create_directories(t.path / "tree");
  fs::create_directories(t.path / "env");
  fs::create_symlink(secret, t.path / "tree" / "f.py");  // swapped in after the cache entry was checked
  ::mkfifo((t.path / "tree" / "fifo.py").c_str(), 0600);
  for (LinkMode mode : {LinkMode::hardlink, LinkMode::copy, LinkMode::clone}) {
    CAPTURE(link_mode_name(mode));
    for (const char* name : {"f.py", "fifo.py"}) {
      Linker linker(mode);
      CHECK_THROWS_AS(linker.link(t.path / "tree" / name, t.path / "env" / name, false), provkit::Error);
      // Neither the link itself (a hard link of it) nor the bytes it points at reach the environment.
      CHECK_FALSE(fs::exists(fs::symlink_status(t.path / "env" / name)));
    }
  }
  CHECK(provkit::util::read_file(secret) == "not the cache's\n");
}

TEST_CASE("a source no longer as unpacked is taken back out and SourceChanged thrown, in every mode", "[envbuild]") {
  TempDir t;
  const fs::path source = t.write("tree/a.py", "x = 1\n");
  fs::create_directories(t.path / "env");
  struct stat st {};
  REQUIRE(::stat(source.c_str(), &st) == 0);
  const std::int64_t mtime = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  const SourceState as_unpacked{6, mtime}, other_size{7, mtime}, other_mtime{6, mtime + 1}, size_only{6, 0};
  CHECK(same_source(st, as_unpacked));
  CHECK(same_source(st, size_only));  // an entry that recorded no mtimes is judged by size
  ::chmod(source.c_str(), 0644);      // the mode umask 022 gives: a hardlink is possible
  provkit::util::Fd tree(::open((t.path / "tree").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  provkit::util::Fd env(::open((t.path / "env").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  const fs::path placed = t.path / "env" / "a.py";
  const FileAt from{tree.get(), "a.py", source}, to{env.get(), "a.py", placed};
  for (LinkMode mode : {LinkMode::hardlink, LinkMode::copy, LinkMode::clone}) {
    CAPTURE(link_mode_name(mode));
    for (const SourceState* expected : {&other_size, &other_mtime}) {
      Linker linker(mode, 022);
      CHECK_THROWS_AS(linker.link(from, to, false, expected), SourceChanged);
      CHECK_FALSE(fs::exists(fs::symlink_status(placed)));  // taken back out
      CHECK(fs::hard_link_count(source) == 1);
      CHECK_THROWS_AS(copy_file_contents(from, to, 0755, expected), SourceChanged);
      CHECK_FALSE(fs::exists(fs::symlink_status(placed)));
    }
    Linker linker(mode, 022);
    linker.link(from, to, false, &as_unpacked);
    CHECK(provkit::util::read_file(placed) == "x = 1\n");
    fs::remove(placed);
  }
}

TEST_CASE("install_wheel links from the cache entry's tree below it: a directory link in the tree is refused",
          "[envbuild]") {
  TempDir t;
  const fs::path wheel = t.path / "demo-1.0-py3-none-any.whl";
  pack_wheel(
      wheel,
      {{"demo/__init__.py", {}, "x = 1\n", false},
       {"demo/sub/data.txt", {}, "the wheel's\n", false},
       {"demo-1.0.dist-info/METADATA", {}, "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", false},
       {"demo-1.0.dist-info/WHEEL", {}, "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n", false}},
      "demo-1.0.dist-info/RECORD");
  CacheEntry entry;
  entry.tree = t.path / "cache" / "tree";
  fs::create_directories(entry.tree);
  entry.info = unpack_wheel(wheel, entry.tree);
  REQUIRE(entry.info.record_problems.empty());  // RECORD was made from the bytes packed
  InstallScheme scheme;
  scheme.root = t.path / "env";
  scheme.purelib = scheme.platlib = scheme.root / "lib" / "python3.11" / "site-packages";
  scheme.scripts = scheme.root / "bin";
  scheme.data = scheme.root;
  scheme.python = scheme.root / "bin" / "python";
  scheme.python_xy = "3.11";
  fs::create_directories(scheme.purelib);

  // As it is, it installs.
  Linker linker(LinkMode::hardlink);
  const fs::path dist_info = install_wheel(entry, plan_install(entry, wheel.filename().string(), scheme), scheme,
                                           linker);
  CHECK(provkit::util::read_file(scheme.purelib / "demo" / "sub" / "data.txt") == "the wheel's\n");
  CHECK(fs::exists(dist_info / "RECORD"));

  // demo/sub replaced by a link to a directory outside the cache, holding a file of the same name.
  const fs::path elsewhere = t.path / "elsewhere";
  t.write("elsewhere/data.txt", "planted\n");
  fs::remove_all(entry.tree / "demo" / "sub");
  fs::create_directory_symlink(elsewhere, entry.tree / "demo" / "sub");
  fs::remove_all(scheme.root);
  fs::create_directories(scheme.purelib);
  for (LinkMode mode : {LinkMode::hardlink, LinkMode::copy}) {
    Linker again(mode);
    CHECK_THROWS_AS(install_wheel(entry, plan_install(entry, wheel.filename().string(), scheme), scheme, again),
                    provkit::Error);
    CHECK_FALSE(fs::exists(scheme.purelib / "demo" / "sub" / "data.txt"));
  }
  CHECK(fs::hard_link_count(elsewhere / "data.txt") == 1);
}

namespace {
mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}
}  // namespace

TEST_CASE("installed modes come from the installing run's umask, never from the cache's file", "[envbuild][modes]") {
  // pip: 0666 less the umask; an executable 0777 less the umask plus every execute bit.
  CHECK(installed_file_mode(false, 022) == 0644);
  CHECK(installed_file_mode(true, 022) == 0755);
  CHECK(installed_file_mode(false, 077) == 0600);
  CHECK(installed_file_mode(true, 077) == 0711);
  CHECK(installed_file_mode(false, 002) == 0664);
  TempDir t;
  const fs::path narrow = t.write("cache/narrow.py", "filled under umask 077\n");  // an older cache's file
  ::chmod(narrow.c_str(), 0600);
  const fs::path wide = t.write("cache/wide.py", "filled as the cache fills now\n");
  ::chmod(wide.c_str(), 0644);
  fs::create_directories(t.path / "env");
  for (LinkMode mode : {LinkMode::hardlink, LinkMode::copy, LinkMode::clone}) {
    CAPTURE(link_mode_name(mode));
    const fs::path env = t.path / "env" / link_mode_name(mode);
    fs::create_directories(env);
    Linker under_022(mode, 022);
    under_022.link(narrow, env / "narrow.py", false);
    CHECK(mode_of(env / "narrow.py") == 0644);
    CHECK(fs::hard_link_count(env / "narrow.py") == 1);  // a hardlink would have been 0600
    under_022.link(narrow, env / "narrow-tool", true);
    CHECK(mode_of(env / "narrow-tool") == 0755);
    Linker under_077(mode, 077);
    under_077.link(wide, env / "wide.py", false);
    CHECK(mode_of(env / "wide.py") == 0600);
    under_077.link(wide, env / "wide-tool", true);
    CHECK(mode_of(env / "wide-tool") == 0711);
    CHECK(mode_of(narrow) == 0600);  // the cache's files keep theirs
    CHECK(mode_of(wide) == 0644);
  }
  // Where the cache file has the mode the umask gives, a hardlink is what it is.
  Linker hard(LinkMode::hardlink, 022);
  hard.link(wide, t.path / "env" / "linked.py", false);
  CHECK(fs::hard_link_count(wide) == 2);
}

TEST_CASE("pip's launcher names: pip gives pip, pipX and pipX.Y; easy_install its versioned name", "[envbuild]") {
  // pip 24.2 and 25.0.1 declare `pip` and `pip3` only; pip and ensurepip add pip3.11 (get_console_script_specs).
  auto names = [](const std::vector<EntryPoint>& eps) {
    std::vector<std::string> out;
    for (const auto& ep : eps) out.push_back(ep.name + "=" + ep.value);
    return out;
  };
  auto pip25 = script_entry_points(
      "[console_scripts]\npip = pip._internal.cli.main:main\npip3 = pip._internal.cli.main:main\n");
  CHECK(names(launchers_as_pip_names_them(pip25, "3.11")) ==
        std::vector<std::string>{"pip=pip._internal.cli.main:main", "pip3=pip._internal.cli.main:main",
                                 "pip3.11=pip._internal.cli.main:main"});
  // An older wheel's pip3.8 is dropped, not kept beside pip3.11; other scripts stay as they are.
  auto old = script_entry_points(
      "[console_scripts]\npip = pip.main:a\npip3.8 = pip.main:b\npipx = other:c\neasy_install = setuptools.c:d\n"
      "easy_install-3.8 = setuptools.c:e\n[gui_scripts]\npip3.8 = gui:f\n");
  CHECK(names(launchers_as_pip_names_them(old, "3.12")) ==
        std::vector<std::string>{"pip=pip.main:a", "pip3=pip.main:a", "pip3.12=pip.main:a",
                                 "easy_install=setuptools.c:d", "easy_install-3.12=setuptools.c:d", "pipx=other:c",
                                 "pip3.8=gui:f"});
  // Without a `pip` entry point nothing is renamed (pip keeps another project's pip3.8 as it is).
  auto other = script_entry_points("[console_scripts]\npip3.8 = x:y\n");
  CHECK(names(launchers_as_pip_names_them(other, "3.11")) == std::vector<std::string>{"pip3.8=x:y"});
}

TEST_CASE(
    "a wheel's files placed in groups by directory from several threads, its directories made level by level side by "
    "side, "
    "install exactly what one thread installs",
    "[envbuild]") {
  TempDir t;
  const fs::path wheel = t.path / "big-1.0-py3-none-any.whl";
  std::vector<PackEntry> members;
  // 3,000 files in 111 directories three levels deep, as a large wheel (torch) has them.
  for (int i = 0; i < 3000; ++i)
    members.push_back(
        {"big/d" + std::to_string(i % 10) + "/e" + std::to_string(i % 100) + "/f" + std::to_string(i) + ".py",
         {},
         "x = " + std::to_string(i) + "\n",
         false});
  members.push_back({"big-1.0.data/scripts/tool", {}, "#!python\nprint('tool')\n", false});
  members.push_back({"big-1.0.dist-info/METADATA", {}, "Metadata-Version: 2.1\nName: big\nVersion: 1.0\n", false});
  members.push_back(
      {"big-1.0.dist-info/WHEEL", {}, "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n", false});
  members.push_back({"big-1.0.dist-info/entry_points.txt", {}, "[console_scripts]\nbig = big.d0:main\n", false});
  pack_wheel(wheel, members, "big-1.0.dist-info/RECORD");
  CacheEntry entry;
  entry.tree = t.path / "cache" / "tree";
  fs::create_directories(entry.tree);
  entry.info = unpack_wheel(wheel, entry.tree);
  REQUIRE(entry.info.record_problems.empty());

  auto scheme_in = [&](const fs::path& root) {
    InstallScheme scheme;
    scheme.root = root;
    scheme.purelib = scheme.platlib = root / "lib" / "python3.11" / "site-packages";
    scheme.scripts = root / "bin";
    scheme.data = root;
    scheme.python = root / "bin" / "python";
    scheme.python_xy = "3.11";
    return scheme;
  };
  // The same environment path for both, so that the launchers' shebangs agree: one thread, then moved aside.
  const InstallScheme scheme = scheme_in(t.path / "env");
  const InstallPlan plan = plan_install(entry, wheel.filename().string(), scheme);
  REQUIRE(plan.files.size() == 3000 + 1 + 3);  // the files, the script, METADATA, WHEEL, entry_points.txt
  Linker one(LinkMode::copy);
  install_wheel(entry, plan, scheme, one);
  fs::rename(scheme.root, t.path / "env-one-thread");

  Linker many(LinkMode::copy);
  WheelInstall install(entry, plan, scheme, 4);
  const auto groups = install.groups_by_directory(256);
  // Every file in one group, and no directory placed into by two groups (threads would queue on its lock).
  std::map<std::size_t, int> seen;
  std::map<fs::path, std::size_t> group_of_dir;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i : groups[g]) {
      ++seen[i];
      auto [at, fresh] = group_of_dir.emplace(plan.files[i].dest.parent_path(), g);
      CHECK(at->second == g);
    }
  CHECK(seen.size() == install.file_count());
  CHECK(std::all_of(seen.begin(), seen.end(), [](const auto& s) { return s.second == 1; }));
  CHECK(groups.size() > 4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t g = t; g < groups.size(); g += 4) install.place_files(groups[g], many);
    });
  for (auto& th : threads) th.join();
  install.finish(many);

  // Every path, its type, mode and bytes the same; RECORD (in the plan's order) byte for byte.
  auto listing = [](const fs::path& root) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      struct stat st {};
      REQUIRE(::lstat(e.path().c_str(), &st) == 0);
      std::string what = std::to_string(st.st_mode);
      if (S_ISREG(st.st_mode)) what += " " + provkit::util::read_file(e.path());
      out[e.path().lexically_relative(root).string()] = what;
    }
    return out;
  };
  const auto one_thread = listing(t.path / "env-one-thread"), threaded = listing(scheme.root);
  // bin/ with tool and big; lib/python3.11/site-packages; big/, d0-d9, 100 e*; the files; the dist-info and its 6.
  CHECK(one_thread.size() == 3 + 3 + 111 + 3000 + 7);
  CHECK(threaded == one_thread);
  CHECK(provkit::util::read_file(scheme.root / "bin" / "tool") == "#!" + scheme.python.string() + "\nprint('tool')\n");
}
