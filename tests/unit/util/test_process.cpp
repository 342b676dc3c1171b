// provkit::util process: the one subprocess runner, with real programs.
#include <unistd.h>
#include <cstdlib>

#include <catch2/catch.hpp>
#include <csignal>

#include "provkit/util/fd.hpp"
#include "provkit/util/process.hpp"

using namespace provkit;

TEST_CASE("run captures stdout, with stderr merged, inherited or discarded", "[util]") {
  std::vector<std::string> sh = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  auto merged = util::run(sh);
  CHECK(merged.output == "out\nerr\n");
  CHECK(merged.exit_status == 3);
  CHECK(util::shell_status(merged) == 3);
  util::RunOptions discard;
  discard.stderr_to = util::StderrTo::discard;
  CHECK(util::run(sh, discard).output == "out\n");
}

TEST_CASE("run: stdin is empty, the environment is the caller's unless given", "[util]") {
  CHECK(util::run({"/bin/sh", "-c", "cat; echo done"}).output == "done\n");
  util::RunOptions env;
  env.env = std::vector<std::string>{"PROVKIT_UTIL_TEST=seen"};
  CHECK(util::run({"/bin/sh", "-c", "echo $PROVKIT_UTIL_TEST"}, env).output == "seen\n");
}

TEST_CASE("run: env_set replaces a variable of the caller's environment and keeps the rest", "[util]") {
  ::setenv("PROVKIT_UTIL_TEST_SET", "1", 1);
  ::setenv("PROVKIT_UTIL_TEST_KEPT", "kept", 1);
  util::RunOptions o;
  o.env_set = {{"PROVKIT_UTIL_TEST_SET", "0"}};
  // One definition of the name, the new one (a second, older one would be what getenv finds in some libcs).
  CHECK(util::run({"/bin/sh", "-c",
                   "env | grep -c '^PROVKIT_UTIL_TEST_SET='; echo $PROVKIT_UTIL_TEST_SET "
                   "$PROVKIT_UTIL_TEST_KEPT"},
                  o)
            .output == "1\n0 kept\n");
  o.env = std::vector<std::string>{"PROVKIT_UTIL_TEST_SET=given"};
  CHECK(util::run({"/bin/sh", "-c", "echo $PROVKIT_UTIL_TEST_SET $PROVKIT_UTIL_TEST_KEPT"}, o).output == "0\n");
  ::unsetenv("PROVKIT_UTIL_TEST_SET");
  ::unsetenv("PROVKIT_UTIL_TEST_KEPT");
}

TEST_CASE("run: a program that cannot start, a signal, a time limit", "[util]") {
  auto missing = util::run({"/nonexistent/provkit-no-such-program"});
  CHECK_FALSE(missing.start_error.empty());
  CHECK(util::shell_status(missing) == 127);
  auto killed = util::run({"/bin/sh", "-c", "kill -TERM $$"});
  CHECK(killed.exit_status == -1);
  CHECK(killed.term_signal == SIGTERM);
  CHECK(util::shell_status(killed) == 128 + SIGTERM);
  util::RunOptions limit;
  limit.timeout = std::chrono::milliseconds(200);
  auto slow = util::run({"/bin/sh", "-c", "echo started; exec sleep 30"}, limit);
  CHECK(slow.timed_out);
  CHECK(slow.exit_status == -1);
  CHECK(slow.output == "started\n");
}

TEST_CASE("write_all and read_blocks move every byte through a pipe", "[util]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string data(50000, 'x');
  REQUIRE(util::write_all(fds[1], data) == 0);
  ::close(fds[1]);
  std::string got;
  char buf[4096];
  auto total = util::read_blocks(
      fds[0], buf, [&](const char* p, std::size_t n) { got.append(p, n); }, "pipe");
  ::close(fds[0]);
  CHECK(total == data.size());
  CHECK(got == data);
  CHECK(util::write_all(fds[1], "late") == EBADF);
}
