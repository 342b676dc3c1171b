#pragma once
// What a run stopped by a signal must do without waiting on anyone, and what the next run finds.
//
// Temporaries a run writes beside their targets and then renames into place (an assembly output, a mirror
// export's tree): each is named "<target>.<tag>-<pid>-<n>" (temp_path_beside), holds an flock(2) for as long
// as its run lives, and is registered with the process, so that a signal's handler removes it before the
// process exits (remove_temporaries_now). A run killed outright (SIGKILL, a power cut) leaves it; the next run
// that writes beside the same target finds it by its name and removes it once its lock is free
// (sweep_temporaries). The lock, not the PID in the name, says whether its writer lives: a PID is reused, an
// flock dies with its holder.
//
// The last words (write_within): a summary written within a bounded time, whatever the reader does.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "provkit/util/fd.hpp"

namespace provkit::util {

namespace fs = std::filesystem;

class Temporary {
 public:
  enum class Kind { file, directory };
  // Creates the temporary for `target_name` in the directory `dir` (a descriptor, duplicated; `dir_path` is
  // its spelling, through which a directory is removed below it): a file (O_EXCL, mode 0644, fd() open for writing) or
  // a directory (mode 0755, fd() open on it). Throws provkit::Error naming the path when it cannot.
  Temporary(int dir, const fs::path& dir_path, const std::string& target_name, std::string_view tag, Kind kind);
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  // Removes the temporary unless commit() moved it (an exception on the way, a rename that failed).
  ~Temporary();

  const std::string& name() const { return name_; }
  fs::path path() const { return dir_path_ / name_; }
  int fd() const { return fd_.get(); }
  // Closes fd(): 0, or close(2)'s errno. The lock stays held (it has its own descriptor).
  int close() { return fd_.close(); }
  // Runs `move` (the rename of the temporary to its final name, or aside), never while a signal's handler
  // removes the temporaries: it runs whole before that handler or not at all. Once `move` returns, the
  // temporary is no longer this object's to remove; when it throws, it still is.
  void commit(const std::function<void()>& move);

 private:
  void remove() const noexcept;
  friend void remove_temporaries_now(std::chrono::milliseconds budget) noexcept;

  Fd dir_;
  fs::path dir_path_;
  std::string name_;
  Kind kind_;
  Fd fd_;    // the file, for writing, or the directory
  Fd lock_;  // the flock, on a descriptor of its own: held until this object goes
  bool registered_ = false;
};

// The signal path: removes every registered temporary, then keeps the registry locked (no commit runs
// afterwards), so the process must exit next. Waits at most `budget` for a commit under way.
void remove_temporaries_now(std::chrono::milliseconds budget) noexcept;

// What sweep_temporaries removed.
struct Swept {
  std::size_t count = 0;
  std::uint64_t bytes = 0;  // the disk the files held (a directory's contents are not counted)
};
// Removes from the directory `dir` (a descriptor; `dir_path` its spelling) every temporary of `target_name`
// with `tag` ("<target_name>.<tag>-<pid>-<n>", as Temporary names them) whose lock is free: the temporary of a
// run that died without its handler. Links and other kinds of files are left alone, and so is everything
// when the directory cannot be read.
Swept sweep_temporaries(int dir, const fs::path& dir_path, const std::string& target_name, std::string_view tag);

// Writes `data` to `fd` without blocking past `budget`, for a path that must end whatever the reader does
// (a signal's summary on a pipe nobody drains): each piece, at most PIPE_BUF bytes (which a pipe with room
// takes whole), is written once poll(2) says `fd` takes it. The descriptor's flags are left as they are (it
// may be shared with other processes). False when the time ran out or a write failed; what was written stays.
bool write_within(int fd, std::string_view data, std::chrono::milliseconds budget);

}  // namespace provkit::util
