// util/file_name: one component by the path rule, for the files named from outside data.
#include <catch2/catch.hpp>
#include <string>

#include "provkit/util/beneath.hpp"
#include "provkit/util/file_name.hpp"

using namespace provkit;

TEST_CASE("is_safe_file_name: the path rule, one component, NAME_MAX at most", "[util][beneath]") {
  for (const char* name : {"demopure-1.0-py3-none-any.whl", "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl", "pip3.12",
                           "a..b", ".hidden", "日本語"}) {
    INFO(name);
    CHECK(util::is_safe_file_name(name));
    CHECK(util::is_safe_relative_path(name));
  }
  for (const char* name : {"", ".", "..", "a/b", "/abs", "demopure-../../x.whl", "a\\b", "a\nb", "tool\x1b[2J", "a\xff",
                           "\xef\xbb\xbf"
                           "a"}) {
    INFO(name);
    CHECK_FALSE(util::is_safe_file_name(name));
  }
  CHECK(util::is_safe_file_name(std::string(255, 'a')));
  CHECK_FALSE(util::is_safe_file_name(std::string(256, 'a')));  // the path rule alone allows 4096
  CHECK(util::is_safe_relative_path(std::string(256, 'a')));
}
