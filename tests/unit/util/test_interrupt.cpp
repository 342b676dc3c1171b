// provkit::util interrupt: temporaries beside their targets, locked while their run lives, removed on the
// signal path and, once their run is gone, by the next run's sweep; and writes that never wait past a budget.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/interrupt.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace provkit;
using util::Temporary;

namespace {
util::Fd open_dir(const fs::path& p) { return util::Fd(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}
}  // namespace

TEST_CASE("a temporary is named beside its target, removed unless committed", "[util][interrupt]") {
  provkit::test::TempDir tmp("temporary");
  util::Fd dir = open_dir(tmp.path);
  {
    Temporary t(dir.get(), tmp.path, "model.gguf", "assemble", Temporary::Kind::file);
    CHECK(t.name().starts_with("model.gguf.assemble-" + std::to_string(::getpid()) + "-"));
    REQUIRE(util::write_all(t.fd(), "bytes") == 0);
    CHECK(t.close() == 0);
    CHECK(fs::exists(t.path()));
  }
  CHECK(entries(tmp.path) == 0);  // not committed: gone with the object (an exception on the way)
  {
    Temporary t(dir.get(), tmp.path, "model.gguf", "assemble", Temporary::Kind::file);
    util::write_all(t.fd(), "bytes");
    t.commit([&] { fs::rename(t.path(), tmp.path / "model.gguf"); });
  }
  CHECK(util::read_file(tmp.path / "model.gguf") == "bytes");
  CHECK(entries(tmp.path) == 1);
  {
    Temporary t(dir.get(), tmp.path, "root", "new", Temporary::Kind::directory);
    fs::create_directories(t.path() / "a" / "b");
    util::write_file_atomic(t.path() / "a" / "b" / "f", "x");
    fs::create_symlink("/", t.path() / "link");  // removed as a link, never followed
    // A rename that throws leaves the temporary the object's own: removed.
    CHECK_THROWS(t.commit([] { throw std::runtime_error("rename failed"); }));
  }
  CHECK(entries(tmp.path) == 1);
}

TEST_CASE("the sweep removes what a dead run left, never a live run's temporary", "[util][interrupt]") {
  provkit::test::TempDir tmp("temporary-sweep");
  util::Fd dir = open_dir(tmp.path);
  // A run killed outright: its temporaries stay, unlocked once it is gone.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto* file = new Temporary(dir.get(), tmp.path, "model.gguf", "assemble", Temporary::Kind::file);
    util::write_all(file->fd(), std::string(100000, 'x'));
    new Temporary(dir.get(), tmp.path, "root", "new", Temporary::Kind::directory);
    ::_exit(0);  // no destructors: as SIGKILL leaves them
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(entries(tmp.path) == 2);
  // Ours, alive and locked, and look-alikes that are no temporaries, stay.
  Temporary live(dir.get(), tmp.path, "model.gguf", "assemble", Temporary::Kind::file);
  for (const char* name : {"model.gguf", "model.gguf.assemble-12", "model.gguf.assemble-a-1", ".assemble-1-2",
                           "model.gguf.assembled-1-2", "other.gguf.assemble-1-2"})
    util::write_file_atomic(tmp.path / name, "keep");
  fs::create_symlink("/nonexistent", tmp.path / "model.gguf.assemble-1-3");

  auto swept = util::sweep_temporaries(dir.get(), tmp.path, "model.gguf", "assemble");
  CHECK(swept.count == 1);
  CHECK(swept.bytes >= 100000);
  CHECK(fs::exists(live.path()));
  for (const char* name : {"model.gguf", "model.gguf.assemble-12", "model.gguf.assemble-a-1", ".assemble-1-2",
                           "model.gguf.assembled-1-2", "other.gguf.assemble-1-2"})
    CHECK(fs::exists(tmp.path / name));
  CHECK(fs::is_symlink(tmp.path / "model.gguf.assemble-1-3"));
  CHECK(util::sweep_temporaries(dir.get(), tmp.path, "root", "new").count == 1);  // the directory, with what it held
  // A name too long for a suffix is shortened with a hash (path_with_suffix): still found.
  const std::string long_name(250, 'n');
  pid_t again = ::fork();
  REQUIRE(again >= 0);
  if (again == 0) {
    new Temporary(dir.get(), tmp.path, long_name, "assemble", Temporary::Kind::file);
    ::_exit(0);
  }
  ::waitpid(again, &status, 0);
  CHECK(util::sweep_temporaries(dir.get(), tmp.path, long_name, "assemble").count == 1);
  CHECK(entries(tmp.path) == 8);
}

TEST_CASE("the signal path removes every live temporary and lets no commit run after it", "[util][interrupt]") {
  provkit::test::TempDir tmp("temporary-signal");
  util::Fd dir = open_dir(tmp.path);
  // In a child: the registry stays locked afterwards, as the process exits next.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    Temporary file(dir.get(), tmp.path, "model.gguf", "assemble", Temporary::Kind::file);
    Temporary tree(dir.get(), tmp.path, "root", "new", Temporary::Kind::directory);
    util::write_file_atomic(tree.path() / "f", "x");
    util::remove_temporaries_now(std::chrono::milliseconds(100));
    ::_exit(fs::exists(file.path()) || fs::exists(tree.path()) ? 1 : 0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(entries(tmp.path) == 0);
}

TEST_CASE("write_within: never blocks past its budget on a pipe nobody drains", "[util][interrupt]") {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  util::Fd r(p[0]), w(p[1]);
  CHECK(util::write_within(w.get(), "a line\n", std::chrono::milliseconds(100)));
  // Fill the pipe as a stalled log shipper leaves it.
  ::fcntl(w.get(), F_SETFL, O_NONBLOCK);
  std::string block(65536, 'x');
  while (::write(w.get(), block.data(), block.size()) > 0) {}
  ::fcntl(w.get(), F_SETFL, 0);
  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(util::write_within(w.get(), "the summary\n", std::chrono::milliseconds(200)));
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= std::chrono::milliseconds(150));
  CHECK(took < std::chrono::seconds(2));
  CHECK((::fcntl(w.get(), F_GETFL) & O_NONBLOCK) == 0);  // the descriptor's flags as they were
  r.reset();
  CHECK_FALSE(util::write_within(w.get(), "x", std::chrono::milliseconds(100)));  // no reader: false, no SIGPIPE
}
