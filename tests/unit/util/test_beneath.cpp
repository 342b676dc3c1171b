// provkit::util beneath: the file-system boundary. Every shape a shared cache
// or someone else's env dir can hold (links of every kind, FIFOs, device
// nodes, oversized files) against every way of opening, through both
// resolvers: the kernel's openat2 and the O_NOFOLLOW walk.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "support/reason_of.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("open_beneath: every planted shape against every open, both resolvers", "[util][beneath]") {
  test::TempDir tmp("beneath");
  fs::path root = tmp / "root", outside = tmp / "outside";
  fs::create_directories(root / "dir");
  fs::create_directories(outside);
  tmp.write("outside/secret", "outside");
  tmp.write("root/dir/file", "inside");
  fs::create_symlink(outside / "secret", root / "abs-link");       // a link out, absolute
  fs::create_symlink("../outside/secret", root / "rel-out-link");  // a link out, relative
  fs::create_symlink("dir/file", root / "rel-in-link");            // a link that stays inside
  fs::create_symlink(outside, root / "dir-link");                  // a directory link out
  fs::create_symlink("dir", root / "dir-in-link");                 // a directory link inside
  fs::create_symlink("/dev/zero", root / "zero-link");
  REQUIRE(::mkfifo((root / "fifo").c_str(), 0644) == 0);
  bool have_device = ::mknod((root / "null-dev").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0;  // /dev/null's numbers
  util::Fd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(root_fd);

  struct Row {
    const char* path;
    int open_errno;     // open_beneath(O_RDONLY): 0 for success
    int regular_errno;  // open_regular_beneath(O_RDONLY)
  };
  const Row rows[] = {
      {"dir/file", 0, 0},
      {"./dir/file", 0, 0},
      {"dir", 0, EISDIR},
      {"abs-link", ELOOP, ELOOP},
      {"rel-out-link", ELOOP, ELOOP},
      {"rel-in-link", ELOOP, ELOOP},  // no link at all below the root, even one that stays inside
      {"dir-link/secret", ELOOP, ELOOP},
      {"dir-in-link/file", ELOOP, ELOOP},
      {"zero-link", ELOOP, ELOOP},
      {"fifo", 0, util::kNotRegularFile},  // O_RDONLY|O_NONBLOCK: never waits for a writer
      {"../outside/secret", EXDEV, EXDEV},
      {"dir/../../outside/secret", EXDEV, EXDEV},
      {"missing", ENOENT, ENOENT},
      {"missing/file", ENOENT, ENOENT},
      {"dir/file/x", ENOTDIR, ENOTDIR},
  };
  for (auto resolver : {util::Resolver::openat2, util::Resolver::walk}) {
    for (const auto& row : rows) {
      INFO((resolver == util::Resolver::walk ? "walk: " : "openat2: ") << row.path);
      errno = 0;
      util::Fd any = util::open_beneath(root_fd.get(), row.path, O_RDONLY | O_NONBLOCK, 0, resolver);
      CHECK((any ? 0 : errno) == row.open_errno);
      util::Fd reg = util::open_regular_beneath(root_fd.get(), row.path, O_RDONLY, 0, resolver);
      CHECK((reg ? 0 : errno) == row.regular_errno);
      if (reg) CHECK((::fcntl(reg.get(), F_GETFL) & O_NONBLOCK) == 0);
    }
    INFO((resolver == util::Resolver::walk ? "walk" : "openat2"));
    // The absolute path of a file below the root is no way out either.
    util::Fd abs = util::open_beneath(root_fd.get(), outside / "secret", O_RDONLY, 0, resolver);
    CHECK((!abs && errno == EXDEV));
    if (have_device) {
      util::Fd dev = util::open_regular_beneath(root_fd.get(), "null-dev", O_RDONLY, 0, resolver);
      CHECK((!dev && errno == util::kNotRegularFile));
    }
    // Writers: O_CREAT through a link creates nothing outside and truncates nothing.
    for (const char* p : {"abs-link", "rel-out-link", "dir-link/new", "dir-link/secret"}) {
      INFO(p);
      util::Fd w = util::open_beneath(root_fd.get(), p, O_WRONLY | O_CREAT | O_TRUNC, 0644, resolver);
      CHECK(!w);
    }
    CHECK(slurp(outside / "secret") == "outside");
    CHECK(!fs::exists(outside / "new"));
    util::Fd created = util::open_beneath(root_fd.get(), "dir/new", O_WRONLY | O_CREAT | O_EXCL, 0644, resolver);
    CHECK(created);
    fs::remove(root / "dir" / "new");
  }
}

TEST_CASE("PROVKIT_FS_RESOLVE=walk makes the automatic resolver walk, with the same answers", "[util][beneath]") {
  test::TempDir tmp("beneath-env");
  fs::create_directories(tmp / "root/dir");
  fs::create_symlink(tmp.path, tmp / "root/up");
  tmp.write("root/dir/file", "x");
  util::Fd root_fd(::open((tmp / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  ::setenv("PROVKIT_FS_RESOLVE", "walk", 1);
  util::Fd ok = util::open_regular_beneath(root_fd.get(), "dir/file", O_RDONLY);
  util::Fd bad = util::open_beneath(root_fd.get(), "up/root/dir/file", O_RDONLY);
  int bad_errno = errno;
  ::unsetenv("PROVKIT_FS_RESOLVE");
  CHECK(ok);
  CHECK((!bad && bad_errno == ELOOP));
}

TEST_CASE("make_dirs_beneath creates what is missing and never through a link", "[util][beneath]") {
  test::TempDir tmp("beneath-mkdir");
  fs::create_directories(tmp / "root");
  fs::create_directories(tmp / "outside");
  fs::create_symlink(tmp / "outside", tmp / "root/link");
  tmp.write("root/file", "x");
  util::Fd root_fd(::open((tmp / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  util::Fd made = util::make_dirs_beneath(root_fd.get(), "a/b/c");
  CHECK(made);
  CHECK(fs::is_directory(tmp / "root/a/b/c"));
  CHECK(::fsync(made.get()) == 0);  // a descriptor fsync takes
  util::Fd through = util::make_dirs_beneath(root_fd.get(), "link/sub");
  CHECK((!through && errno == ELOOP));
  CHECK(!fs::exists(tmp / "outside/sub"));
  util::Fd over_file = util::make_dirs_beneath(root_fd.get(), "file/sub");
  CHECK((!over_file && errno == ENOTDIR));
  CHECK((!util::make_dirs_beneath(root_fd.get(), "../escape") && errno == EXDEV));
}

TEST_CASE("Root: reads bounded and regular, writes and renames never leave it", "[util][beneath]") {
  test::TempDir tmp("beneath-root");
  fs::path root_dir = tmp / "cache";
  fs::create_directories(root_dir / "snapshots");
  fs::create_directories(tmp / "outside");
  tmp.write("outside/victim", "keep");
  fs::create_symlink(tmp / "outside", root_dir / "snapshots/sub");  // a planted directory link
  fs::create_symlink(tmp / "outside/victim", root_dir / "stamp");   // a planted file link
  fs::create_symlink("/dev/zero", root_dir / "ranges");
  REQUIRE(::mkfifo((root_dir / "refs-main").c_str(), 0644) == 0);
  tmp.write("cache/big", std::string(5000, 'x'));
  util::Root root(root_dir);

  CHECK(test::reason_of([&] { root.read(root_dir / "ranges", 1 << 20); }) == util::FileRefusal::link_in_the_way);
  CHECK(test::reason_of([&] { root.read(root_dir / "refs-main", 1 << 20); }) == util::FileRefusal::not_regular);
  CHECK(test::reason_of([&] { root.read(root_dir / "big", 4999); }) == util::FileRefusal::too_large);
  CHECK(root.read(root_dir / "big", 5000).size() == 5000);
  CHECK(root.read_if_present(root_dir / "none", 10).empty());
  CHECK_THROWS(root.read_if_present(root_dir / "refs-main", 10));
  CHECK(test::reason_of([&] { root.relative(tmp / "outside/victim"); }) == util::FileRefusal::outside_root);
  // The same root spelled another way is the same root.
  util::Root spelled(tmp.path / "cache" / ".." / "cache");
  CHECK(spelled.relative(root_dir / "big") == "big");

  // A write at a planted file link replaces the link; the file it pointed at is untouched.
  root.write_atomic(root_dir / "stamp", "new");
  CHECK(!fs::is_symlink(root_dir / "stamp"));
  CHECK(slurp(root_dir / "stamp") == "new");
  CHECK(slurp(tmp / "outside/victim") == "keep");
  // A write or a rename through a planted directory link fails and writes nothing outside.
  CHECK(test::reason_of([&] { root.write_atomic(root_dir / "snapshots/sub/file", "x"); }) ==
        util::FileRefusal::link_in_the_way);
  tmp.write("cache/blob", "blob");
  CHECK_THROWS(root.rename(root_dir / "blob", root_dir / "snapshots/sub/blob"));
  CHECK(fs::exists(root_dir / "blob"));
  CHECK(fs::directory_iterator(tmp / "outside") != fs::directory_iterator());
  CHECK(std::distance(fs::directory_iterator(tmp / "outside"), fs::directory_iterator()) == 1);
  root.rename(root_dir / "blob", root_dir / "blobs/moved");
  CHECK(slurp(root_dir / "blobs/moved") == "blob");
  CHECK(root.remove(root_dir / "blobs/moved"));
  CHECK(!root.remove(root_dir / "blobs/moved"));
  struct stat st;
  CHECK(root.stat(root_dir / "snapshots/sub", st));
  CHECK(S_ISLNK(st.st_mode));
}

TEST_CASE("Root::remove_all removes a tree and never what its links point at", "[util][beneath]") {
  test::TempDir tmp("beneath-remove-all");
  fs::path root_dir = tmp / "cache";
  fs::create_directories(root_dir / "entry/tree/pkg/deep");
  fs::create_directories(tmp / "outside/dir");
  tmp.write("outside/victim", "keep");
  tmp.write("outside/dir/victim", "keep");
  tmp.write("cache/entry/tree/pkg/deep/file", "x");
  tmp.write("cache/entry/files.json", "{}");
  fs::create_symlink(tmp / "outside", root_dir / "entry/tree/pkg/dir-link");      // a directory link inside
  fs::create_symlink(tmp / "outside/victim", root_dir / "entry/tree/file-link");  // a file link inside
  REQUIRE(::mkfifo((root_dir / "entry/tree/fifo").c_str(), 0644) == 0);
  fs::create_symlink(tmp / "outside", root_dir / "linked-entry");  // the tree named is itself a link
  fs::create_symlink(tmp / "outside", root_dir / "via");           // a link on the way to it
  util::Root root(root_dir);

  CHECK(root.remove_all(root_dir / "entry"));
  CHECK(!fs::exists(root_dir / "entry"));
  CHECK(!root.remove_all(root_dir / "entry"));
  // A link named is removed as a link; a link on the way is refused; the outside is whole.
  CHECK(root.remove_all(root_dir / "linked-entry"));
  CHECK(!fs::is_symlink(root_dir / "linked-entry"));
  CHECK(test::reason_of([&] { root.remove_all(root_dir / "via/dir"); }) == util::FileRefusal::link_in_the_way);
  CHECK(slurp(tmp / "outside/victim") == "keep");
  CHECK(slurp(tmp / "outside/dir/victim") == "keep");
  // A plain file.
  tmp.write("cache/plain", "x");
  CHECK(root.remove_all(root_dir / "plain"));
  CHECK(!fs::exists(root_dir / "plain"));
}

TEST_CASE("DirectoryWalk: one open per directory, and a link on the way or at the end is never followed",
          "[util][beneath]") {
  test::TempDir tmp("beneath-walk");
  fs::create_directories(tmp / "tree/a/b");
  fs::create_directories(tmp / "outside");
  tmp.write("tree/top", "1");
  tmp.write("tree/a/one", "22");
  tmp.write("tree/a/b/two", "333");
  tmp.write("outside/two", "outside!");
  fs::create_symlink(tmp / "outside", tmp / "tree/via");         // a directory link on the way
  fs::create_symlink(tmp / "outside/two", tmp / "tree/a/link");  // the file itself a link
  util::Root root(tmp.path);
  util::DirectoryWalk walk(root.open(tmp / "tree", O_PATH | O_DIRECTORY));
  REQUIRE(walk.valid());
  struct stat st {};
  REQUIRE(walk.stat("top", st));
  CHECK(st.st_size == 1);
  REQUIRE(walk.stat("a/one", st));
  CHECK(st.st_size == 2);
  REQUIRE(walk.stat("a/b/two", st));
  CHECK(st.st_size == 3);
  REQUIRE(walk.stat("a/link", st));
  CHECK(S_ISLNK(st.st_mode));  // lstat: the link, not its target
  CHECK(!walk.stat("via/two", st));
  CHECK(errno == ELOOP);
  CHECK(!walk.stat("a/missing", st));
  CHECK(errno == ENOENT);
  CHECK(!walk.stat("../outside/two", st));  // never above the top
  CHECK(!walk.stat("/etc/passwd", st));
  REQUIRE(walk.stat("a/one", st));  // back to a directory seen before
  CHECK(st.st_size == 2);
  // The top itself a link: nothing to walk.
  fs::create_symlink(tmp / "outside", tmp / "linked-tree");
  util::DirectoryWalk linked(root.open(tmp / "linked-tree", O_PATH | O_DIRECTORY));
  CHECK(!linked.valid());
  CHECK(!linked.stat("two", st));
}

TEST_CASE("Root::publish links the descriptor's own file: bytes renamed onto its name are never published",
          "[util][beneath]") {
  test::TempDir tmp("beneath-publish");
  util::Root root(tmp / "cache");
  root.write_atomic(tmp / "cache/blobs/x.partial", "hashed bytes");
  util::Fd held = root.open_regular(tmp / "cache/blobs/x.partial", O_RDWR);
  REQUIRE(held);
  SECTION("the name still names it: published, the old name gone") {
    root.publish(held.get(), tmp / "cache/blobs/x.partial", tmp / "cache/blobs/x");
    CHECK(slurp(tmp / "cache/blobs/x") == "hashed bytes");
    CHECK(!fs::exists(tmp / "cache/blobs/x.partial"));
  }
  SECTION("other bytes renamed onto the name after the hash: refused, nothing published, the others stay") {
    // The rename unlinked the hashed file (no name is left to link: the kernel refuses a link to an
    // unlinked inode), so the only right outcome is a refusal; the next run fetches again.
    tmp.write("cache/blobs/planted", "attacker bytes");
    fs::rename(tmp / "cache/blobs/planted", tmp / "cache/blobs/x.partial");
    CHECK_THROWS_AS(root.publish(held.get(), tmp / "cache/blobs/x.partial", tmp / "cache/blobs/x"), Error);
    CHECK(!fs::exists(tmp / "cache/blobs/x"));
    CHECK(slurp(tmp / "cache/blobs/x.partial") == "attacker bytes");
  }
  SECTION("other bytes renamed onto the name while the hashed file keeps another name: the hashed ones are published") {
    fs::create_hard_link(tmp / "cache/blobs/x.partial", tmp / "cache/blobs/kept");
    tmp.write("cache/blobs/planted", "attacker bytes");
    fs::rename(tmp / "cache/blobs/planted", tmp / "cache/blobs/x.partial");
    root.publish(held.get(), tmp / "cache/blobs/x.partial", tmp / "cache/blobs/x");
    CHECK(slurp(tmp / "cache/blobs/x") == "hashed bytes");
    CHECK(slurp(tmp / "cache/blobs/x.partial") == "attacker bytes");
  }
  SECTION("a copy already at the target is replaced by the hashed file") {
    tmp.write("cache/blobs/x", "old copy");
    root.publish(held.get(), tmp / "cache/blobs/x.partial", tmp / "cache/blobs/x");
    CHECK(slurp(tmp / "cache/blobs/x") == "hashed bytes");
    CHECK(fs::directory_iterator(tmp / "cache/blobs") != fs::directory_iterator());
    int entries = 0;
    for ([[maybe_unused]] auto& e : fs::directory_iterator(tmp / "cache/blobs")) ++entries;
    CHECK(entries == 1);  // no temporary left beside it
  }
  SECTION("a link planted at the target's directory is not followed") {
    fs::create_directories(tmp / "outside");
    fs::create_symlink(tmp / "outside", tmp / "cache/snap");
    CHECK_THROWS_AS(root.publish(held.get(), tmp / "cache/blobs/x.partial", tmp / "cache/snap/x"), Error);
    CHECK(!fs::exists(tmp / "outside/x"));
  }
}

// One table for the path rule: the names real inputs carry (Hub paths with
// subfolders, wheel RECORD and zip names, interpreter archive entries) pass;
// everything that could leave the root or forge a line does not.
TEST_CASE("open_output_stream: a FIFO that nothing reads fails at once, one with a reader is written",
          "[util][beneath]") {
  test::TempDir tmp("beneath-output");
  const auto fifo = tmp / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  errno = 0;
  CHECK(!util::open_output_stream(fifo));  // a blocking open would wait here for a reader forever
  CHECK(errno == ENXIO);
  CHECK(util::describe_open_error(ENXIO).find("without a reader") != std::string::npos);
  util::Fd reader(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  REQUIRE(reader);
  util::Fd out = util::open_output_stream(fifo);
  REQUIRE(out);
  CHECK((::fcntl(out.get(), F_GETFL) & O_NONBLOCK) == 0);  // blocking again for the writes
  CHECK(util::write_all(out.get(), "abc") == 0);
  char buf[4] = {};
  CHECK(::read(reader.get(), buf, sizeof buf) == 3);
  CHECK(std::string(buf, 3) == "abc");
  CHECK(util::open_output_stream("/dev/null"));
}

TEST_CASE("the path rule: one table for every name from outside", "[util][beneath]") {
  struct Row {
    std::string path;
    bool safe;
    bool safe_as_archive_entry;  // Trailing::slash_allowed
  };
  const Row rows[] = {
      {"config.json", true, true},
      {"model-00001-of-00004.safetensors", true, true},
      {"unet/diffusion_pytorch_model.fp16.safetensors", true, true},  // Hub subfolders
      {"numpy-1.26.4.dist-info/RECORD", true, true},                  // wheel entries
      {"numpy-1.26.4.data/scripts/f2py", true, true},
      {"python/install/lib/python3.12/site-packages/pip/__init__.py", true, true},  // python-build-standalone
      {"python/install/bin/", false, true},                                         // an archive's directory entry
      {"日本語/モデル.bin", true, true},
      {".gitattributes", true, true},
      {"a..b", true, true},
      {"", false, false},
      {"/", false, false},
      {"/etc/passwd", false, false},
      {"../x", false, false},
      {"a/../../x", false, false},
      {"a/./b", false, false},
      {".", false, false},
      {"a//b", false, false},
      {"a/b//", false, false},
      {"a\\..\\b", false, false},
      {"a\nb", false, false},
      {"a\rb", false, false},
      {std::string("a\0b", 3), false, false},
      {"a\x1b[2Jb", false, false},
      {"a\x7f", false, false},
      {"a\xc2\x85"
       "b",
       false, false},  // NEL (C1)
      {"a\xe2\x80\xa8"
       "b",
       false, false},  // LINE SEPARATOR
      {"\xef\xbb\xbf"
       "a",
       false, false},               // BOM
      {"a\xff", false, false},      // not UTF-8
      {"a\xc0\xaf", false, false},  // overlong '/'
      {std::string(4097, 'a'), false, false},
  };
  for (const auto& row : rows) {
    INFO(row.path);
    CHECK(util::is_safe_relative_path(row.path) == row.safe);
    CHECK(util::is_safe_relative_path(row.path, util::Trailing::slash_allowed) == row.safe_as_archive_entry);
  }
  // Containment: where a RECORD row or an archive's link target may reach with "..".
  CHECK(util::is_within("/env/lib/python3.12/site-packages/../../../bin/tool", "/env"));
  CHECK(util::is_within("../../../bin/tool", "/env/lib/python3.12/site-packages") == false);
  CHECK(!util::is_within("../../bin/tool", "/env/lib/python3.12"));
  CHECK(util::is_within("a/../b", "/env"));
  CHECK(!util::is_within("/env/../etc/passwd", "/env"));
  CHECK(!util::is_within("/envelope/x", "/env"));
  CHECK(util::is_within("/env", "/env"));
  CHECK(util::is_within("lib/../lib/libpython3.so", "/dest/python"));
  CHECK(!util::is_within("lib/../../../etc", "/dest/python"));
}
