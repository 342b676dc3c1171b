#pragma once
// Installs one unpacked wheel from the cache into an environment: files
// linked from the cache, .data mapped, #!python shebangs rewritten, console
// and GUI launchers from entry_points.txt, RECORD/INSTALLER/REQUESTED written.
#include <string>
#include <vector>

#include "provkit/python/linker.hpp"
#include "provkit/python/venv.hpp"
#include "provkit/python/wheel_cache.hpp"

namespace provkit::python {

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

// Checks, without writing, that `entry` (from wheel `wheel_filename`) can be
// installed into `layout`: its .dist-info and METADATA name the project and
// version of the file name, its .data and scripts map, and no file or
// launcher lands on the environment's skeleton (venv_skeleton). Throws
// Error(check_failed) naming the wheel otherwise.
void check_wheel_fits(const CacheEntry& entry, const std::string& wheel_filename, const VenvLayout& layout);

// Installs `entry` (from wheel `wheel_filename`) into `layout` after the same
// checks. Returns the dist-info path.
fs::path install_wheel(const CacheEntry& entry, const std::string& wheel_filename, const VenvLayout& layout,
                       Linker& linker);

}  // namespace provkit::python
