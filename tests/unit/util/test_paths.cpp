// provkit::util paths: colon lists and finding an executable.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "provkit/util/paths.hpp"

namespace fs = std::filesystem;
using namespace provkit;

TEST_CASE("split_path_list: empty entries skipped, or the current dir as execvp reads PATH", "[util]") {
  using V = std::vector<std::string>;
  CHECK(util::split_path_list("/a::/b:") == V{"/a", "/b"});
  CHECK(util::split_path_list("") == V{});
  CHECK(util::split_path_list(":/a::", util::EmptyEntry::current_dir) == V{".", "/a", ".", "."});
  CHECK(util::split_path_list("", util::EmptyEntry::current_dir) == V{"."});
}

TEST_CASE("find_executable takes the first executable regular file on the list", "[util]") {
  auto root = fs::temp_directory_path() / ("util-paths-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "one");
  fs::create_directories(root / "two");
  fs::create_directories(root / "three" / "tool");  // a directory of that name is no executable
  std::ofstream(root / "one" / "tool") << "not executable";
  std::ofstream(root / "two" / "tool") << "#!/bin/sh\n";
  fs::permissions(root / "two" / "tool", fs::perms::owner_all);
  auto list = (root / "three").string() + "::" + (root / "one").string() + ":" + (root / "two").string();
  CHECK(util::find_executable("tool", list) == root / "two" / "tool");
  CHECK_FALSE(util::find_executable("tool", (root / "one").string()));
  CHECK(util::find_executable((root / "two" / "tool").string(), "") == root / "two" / "tool");
  CHECK_FALSE(util::find_executable("", list));
  CHECK(util::is_executable_file(root / "two" / "tool"));
  CHECK_FALSE(util::is_executable_file(root / "three" / "tool"));
  fs::remove_all(root);
}
