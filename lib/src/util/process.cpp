#include "provkit/util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "provkit/util/fd.hpp"

extern char** environ;

namespace provkit::util {

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  RunResult r;
  if (argv.empty()) {
    r.start_error = "no program to run";
    return r;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.start_error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return r;
  }
  Fd read_end(fds[0]), write_end(fds[1]);
  // The child's stdin (and with StderrTo::discard its stderr) is /dev/null, opened here, once, as owned
  // descriptors (close-on-exec: only the dup2'd copies reach the child).
  Fd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  Fd null_out(options.stderr_to == StderrTo::discard ? ::open("/dev/null", O_WRONLY | O_CLOEXEC) : -1);
  if (!null_in || (options.stderr_to == StderrTo::discard && !null_out)) {
    r.start_error = std::string("cannot open /dev/null: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, null_in.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  if (options.stderr_to == StderrTo::output) posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  if (options.stderr_to == StderrTo::discard) posix_spawn_file_actions_adddup2(&actions, null_out.get(), 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  if (options.env) env_strings = *options.env;
  else if (!options.env_set.empty())
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& [name, value] : options.env_set) {
    const std::string prefix = name + "=";
    env_strings.erase(std::remove_if(env_strings.begin(), env_strings.end(),
                                     [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }),
                      env_strings.end());
    env_strings.push_back(prefix + value);
  }
  const bool own_env = options.env || !options.env_set.empty();
  std::vector<char*> envp;
  if (own_env) {
    for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), own_env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();  // the child holds the write end now: EOF when it exits
  null_in.reset();
  null_out.reset();
  if (rc != 0) {
    r.start_error = std::strerror(rc);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + options.timeout.value_or(std::chrono::milliseconds(0));
  char buf[65536];
  for (;;) {
    int wait_ms = -1;
    if (options.timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        r.timed_out = true;
        ::kill(pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    pollfd p{read_end.get(), POLLIN, 0};
    int n = ::poll(&p, 1, wait_ms);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;  // EINTR, or the time limit (checked above)
    ssize_t got = ::read(read_end.get(), buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    r.output.append(buf, static_cast<std::size_t>(got));
  }
  read_end.reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) {
    if (!r.timed_out) r.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
  }
  return r;
}

int shell_status(const RunResult& r) {
  if (!r.start_error.empty()) return 127;
  if (r.term_signal != 0) return 128 + r.term_signal;
  return r.exit_status;
}

}  // namespace provkit::util
