#include "provkit/util/file_name.hpp"

#include "provkit/util/beneath.hpp"

namespace provkit::util {

bool is_safe_file_name(std::string_view name) {
  return name.size() <= 255 && name.find('/') == std::string_view::npos && is_safe_relative_path(name);
}

}  // namespace provkit::util
