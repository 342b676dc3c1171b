#pragma once
// Colon-separated directory lists (PATH, LIBRARY_PATH, LD_LIBRARY_PATH,
// DT_RPATH) and finding an executable on one.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::util {

namespace fs = std::filesystem;

// What an empty entry ("a::b", a leading or trailing ':') means.
enum class EmptyEntry {
  skip,         // nothing: the loader's and the linker's reading
  current_dir,  // ".": POSIX's reading of PATH for execvp
};

// The entries of a colon-separated list, in order.
std::vector<std::string> split_path_list(std::string_view list, EmptyEntry empty = EmptyEntry::skip);

// A regular file (after symlinks) that this process may execute.
bool is_executable_file(const fs::path& p);

// `name` on the colon-separated `path_list` (an executable regular file;
// empty entries skipped); a name with a '/' is checked as it is.
std::optional<fs::path> find_executable(const std::string& name, std::string_view path_list);

}  // namespace provkit::util
