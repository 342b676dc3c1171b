#pragma once
// Installs one unpacked wheel from the cache into an environment: files
// linked from the cache, .data mapped, #!python shebangs rewritten, console
// and GUI launchers from entry_points.txt, RECORD/INSTALLER/REQUESTED written.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/wheels/cache.hpp"
#include "provkit/wheels/linker.hpp"
#include "provkit/wheels/record.hpp"

namespace provkit::wheels {

namespace fs = std::filesystem;

// Where a wheel's files go (pyenv::install_scheme makes it from an environment's layout): the scheme's
// directories, the interpreter its scripts run, and the files no wheel may install over.
struct InstallScheme {
  fs::path root;
  fs::path purelib, platlib, scripts, data;
  fs::path python;  // root/bin/python
  std::string python_xy;
  std::vector<fs::path> skeleton;  // lexically normal (pyenv::venv_skeleton)
};

// The shebang for scripts run by `python`: "#!<python>\n", or the /bin/sh
// exec form when the path is longer than 127 bytes or holds a space.
std::string script_shebang(const std::string& python);

// One launcher script for an entry point "module:attr [extras]".
std::string launcher_script(const std::string& python, const std::string& entry_point);

struct EntryPoint {
  std::string name, value;
  bool gui = false;
};
// [console_scripts] and [gui_scripts] of an entry_points.txt.
std::vector<EntryPoint> script_entry_points(const std::string& entry_points_txt);

// The launchers pip makes from those entry points for a Python `python_xy` ("3.11"), pip's own corner
// (get_console_script_specs in pip/_internal/operations/install/wheel.py): a console script `pip` gives `pip`,
// `pipX` and `pipX.Y` (ensurepip's names; any other `pipN` or `pipN.M` entry is dropped), and `easy_install`
// gives `easy_install` and `easy_install-X.Y`. Every other entry point is as it is.
std::vector<EntryPoint> launchers_as_pip_names_them(const std::vector<EntryPoint>& entry_points,
                                                    const std::string& python_xy);

// One file of the wheel and where it goes.
struct Placement {
  const UnpackedFile* file;  // in the CacheEntry the plan was made from
  fs::path dest;
  bool is_script = false;
};

// Where everything of an unpacked wheel goes, judged before anything is written.
struct InstallPlan {
  std::string dist_info;
  fs::path root;  // purelib or platlib, per Root-Is-Purelib
  std::vector<Placement> files;
  std::vector<std::pair<fs::path, EntryPoint>> launchers;
};

// Works out, without writing, where `entry` (from wheel `wheel_filename`) goes in `layout`, and checks that
// it can go there: its WHEEL is version 1, its .dist-info and METADATA name the project and version of the
// file name, its .data and scripts map, and no file or launcher lands on the environment's skeleton
// (layout.skeleton). Throws Error(check_failed) naming the wheel otherwise. The plan points into `entry`.
InstallPlan plan_install(const CacheEntry& entry, const std::string& wheel_filename, const InstallScheme& layout);

// One wheel's install in three steps, so that the files of a large wheel (torch's 15,000) are placed on
// every core rather than on the one thread that has the wheel:
//   WheelInstall install(entry, plan, layout);  // every directory made and opened, in the environment and
//                                               // in the cache entry's tree, before a file is placed
//   for (auto& group : install.groups_by_directory(n))  // the plan's files, in groups that share no directory
//     install.place_files(group, linker);            // from any threads at once
//   install.finish();                           // launchers, INSTALLER, REQUESTED and RECORD, once all are placed
// `entry`, `plan` and `layout` must outlive it.
class WheelInstall {
 public:
  // With `threads` > 1, the directories are made on that many threads (a wheel of thousands of them).
  WheelInstall(const CacheEntry& entry, const InstallPlan& plan, const InstallScheme& layout, unsigned threads = 1);
  std::size_t file_count() const { return plan_.files.size(); }
  // The plan's files (indexes into plan.files) in groups of about `files_per_group`, every file in one group
  // and no two groups placing into the same directory, the largest first: a link or a new file takes its
  // directory's lock for writing, so threads placing into one directory (torch's include/ATen/ops/ holds
  // thousands) would wait on each other; a directory larger than a group is one group of its own.
  std::vector<std::vector<std::size_t>> groups_by_directory(std::size_t files_per_group) const;
  // Places the plan's files `which` (indexes into plan.files). Groups that do not overlap may be placed at once.
  void place_files(const std::vector<std::size_t>& which, Linker& linker);
  // Returns the dist-info path.
  fs::path finish(const Linker& linker);

 private:
  fs::path mapped_dir(std::string_view parent) const;
  void make_dirs_side_by_side(unsigned threads);
  int dest_dir_of(const fs::path& dest);
  int open_dir(const fs::path& dir);
  int open_source_dir(const fs::path& parent);
  std::string record_path(const fs::path& dest) const;

  const CacheEntry& entry_;
  const InstallPlan& plan_;
  const InstallScheme& layout_;
  const fs::path site_;    // purelib, lexically normal: RECORD's paths are relative to it
  const util::Root tree_;  // the cache entry's files, read without following a link
  const util::Root env_;
  bool lib64_is_lib_ = false;
  std::map<std::string, util::Fd> made_dirs_;
  std::map<std::string, int, std::less<>> dest_dir_fds_, source_dir_fds_;
  std::vector<util::Fd> source_fds_;
  std::vector<int> target_dirs_, source_dirs_;  // per plan file
  std::vector<RecordRow> rows_;                 // per plan file, filled as each is placed
};

// Installs `entry` into `layout` as `plan` (plan_install's for them) says, on the calling thread. Returns the
// dist-info path.
fs::path install_wheel(const CacheEntry& entry, const InstallPlan& plan, const InstallScheme& layout, Linker& linker);

}  // namespace provkit::wheels
