#include "provkit/ccshim/supervise.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"

extern char** environ;

namespace provkit::ccshim {

namespace fs = std::filesystem;

namespace {

constexpr std::array<int, 4> passed_on_signals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
volatile sig_atomic_t zig_pid = 0;

void pass_on(int sig) {
  if (zig_pid > 0) ::kill(static_cast<pid_t>(zig_pid), sig);
}

// The signals above, sent to the shim (make's kill, a terminal's ^C to the shim alone), go to zig too; the
// shim stays to clean up. One the caller ignores (nohup) stays ignored, for zig as well (exec keeps it).
void install_pass_on() {
  for (int sig : passed_on_signals) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = pass_on;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

// Lines of `fd` to `to_stderr` as they come, minus silent_in_gnu_ld ones.
void relay_stderr(int fd, const std::function<void(std::string_view)>& to_stderr) {
  std::string pending;
  std::array<char, 8192> buf;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf.data(), static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(pending.data() + start, nl + 1 - start);
      if (!silent_in_gnu_ld(line.substr(0, line.size() - 1))) to_stderr(line);
    }
    pending.erase(0, start);
  }
  if (!pending.empty() && !silent_in_gnu_ld(pending)) to_stderr(pending);
}

// The bytes zig wrote in `out.written` given to `out.given`: into it as it is (a FIFO, /dev/stdout, a
// device), or, with replace_link, in a file of its own renamed over the link, never written through it.
bool copy_into(const Exec::Output& output, const std::function<void(std::string_view)>& err) {
  const std::string &from = output.written, &to = output.given;
  util::Fd in = util::open_regular(from, O_RDONLY);
  if (!in) return true;  // zig wrote nothing there (-fsyntax-only, -M): nothing to give
  if (output.replace_link) {
    try {
      util::write_file_atomic(to, util::read_bounded(in.get(), util::kReadFileMax, from), fs::perms(0644),
                              util::Durability::process_crash);
      return true;
    } catch (const std::exception& e) {
      err("cc-shim: cannot write " + to + ": " + e.what() + "\n");
      return false;
    }
  }
  // `to` is no regular file (a FIFO, /dev/stdout, a device): opened as it is, never replaced; a FIFO that
  // nothing reads is an error at once, never a wait.
  util::Fd out = util::open_output_stream(to);
  bool ok = static_cast<bool>(out);
  std::string why = ok ? "" : util::describe_open_error(errno);
  if (ok) {
    std::array<char, 65536> buf;
    try {
      util::read_blocks(
          in.get(), buf,
          [&](const char* data, std::size_t size) {
            if (ok && util::write_all(out.get(), data, size) != 0) {
              why = std::strerror(errno);
              ok = false;
            }
          },
          from);
    } catch (const Error& e) {
      why = e.what();
      ok = false;
    }
  }
  if (!ok) err("cc-shim: cannot write " + to + ": " + why + "\n");
  return ok;
}

}  // namespace

bool silent_in_gnu_ld(std::string_view line) {
  constexpr std::string_view head = "ld.lld: warning: version script assignment of '";
  constexpr std::string_view tail = "' failed: symbol not defined";
  return line.starts_with(head) && line.ends_with(tail) && line.find(" to symbol '") != std::string_view::npos;
}

std::string make_scratch_dir(const std::string& parent) {
  // `parent` (<global cache>/cc-shim-runs) is made without following a link planted in a shared cache:
  // zig's local cache and the outputs below it never land outside.
  try {
    util::Root(fs::path(parent).parent_path()).make_dirs(parent);
  } catch (const Error& e) {
    throw Error(ExitCode::usage, std::string("cannot make a scratch directory: ") + e.what());
  }
  std::string tmpl = (fs::path(parent) / "cc-shim-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    throw Error(ExitCode::usage, "cannot make a scratch directory in " + parent + ": " + std::strerror(errno));
  return tmpl;
}

int supervise(const Exec& run, const std::function<void(std::string_view)>& to_stderr) {
  struct RemoveScratch {
    const std::string& dir;
    ~RemoveScratch() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } remove_scratch{run.scratch_dir};

  util::Fd read_end, write_end;  // zig's stderr, when its linker warnings are filtered
  if (run.filter_linker_warnings) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
      throw Error(ExitCode::usage, std::string("cannot make a pipe for zig's stderr: ") + std::strerror(errno));
    read_end.reset(pipe_fds[0]);
    write_end.reset(pipe_fds[1]);
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  if (write_end) ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);

  // Blocked until zig's pid is known, so a signal in between is passed on rather than lost.
  sigset_t block, old_mask;
  ::sigemptyset(&block);
  for (int sig : passed_on_signals) ::sigaddset(&block, sig);
  ::sigprocmask(SIG_BLOCK, &block, &old_mask);
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  ::posix_spawnattr_setsigmask(&attr, &old_mask);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  install_pass_on();

  std::vector<char*> argv;
  for (const auto& a : run.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (rc == 0) zig_pid = pid;
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  write_end.reset();  // zig holds it now: EOF when it exits
  if (rc != 0) throw Error(ExitCode::usage, "cannot run " + run.argv[0] + ": " + std::strerror(rc));
  if (read_end) {
    relay_stderr(read_end.get(), to_stderr);
    read_end.reset();
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  zig_pid = 0;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::error_code ec;
    if (!run.scratch_dir.empty()) fs::remove_all(run.scratch_dir, ec);  // raise() ends the shim before the guard
    // Ended the way zig ended, as a shell or make would see zig's own end.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return 128 + sig;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (code == 0)
    for (const auto& output : run.outputs)
      if (!copy_into(output, to_stderr)) code = 1;
  return code;
}

}  // namespace provkit::ccshim
