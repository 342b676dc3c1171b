// provkit::util process: the one subprocess runner, with real programs.
#include <unistd.h>

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
