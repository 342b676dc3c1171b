#include "provkit/util/paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace provkit::util {

std::vector<std::string> split_path_list(std::string_view list, EmptyEntry empty) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto colon = list.find(':', start);
    if (colon == std::string_view::npos) colon = list.size();
    if (colon > start) {
      out.emplace_back(list.substr(start, colon - start));
    } else if (empty == EmptyEntry::current_dir) {
      out.emplace_back(".");
    }
    start = colon + 1;
  }
  return out;
}

bool is_executable_file(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<fs::path> find_executable(const std::string& name, std::string_view path_list) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (is_executable_file(name)) return fs::path(name);
    return std::nullopt;
  }
  for (const auto& dir : split_path_list(path_list)) {
    fs::path candidate = fs::path(dir) / name;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace provkit::util
