#include "shared_library.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <vector>

#include "provkit/util/beneath.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/paths.hpp"

namespace provkit::host {

namespace {

// The first file the loader would open for `name` that is a FIFO, a device or a socket, or "": the loader's
// own open of a FIFO waits for a writer forever. A path is that file; a bare soname is searched, and the
// part of the search that a user's or a job's environment names (LD_LIBRARY_PATH, read as elf's loader
// search reads it) is looked at up to its first regular file; the system's cache and directories that follow
// are root's.
std::string unloadable_file(const std::string& name) {
  std::vector<std::string> candidates;
  if (name.find('/') != std::string::npos) candidates.push_back(name);
  else
    for (const auto& dir : util::split_path_list(util::env_value(util::EnvVar::ld_library_path)))
      candidates.push_back(std::string(dir).append("/").append(name));
  for (const auto& file : candidates) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;  // the loader goes on past these
    if (S_ISREG(st.st_mode)) return "";  // it opens this one (or skips it for reasons of its own)
    return file;
  }
  return "";
}

}  // namespace

SharedLibrary::SharedLibrary(const std::string& name, Binding binding) {
  // What the loader would open and wait on is refused here; anything else is the loader's to word.
  if (const std::string file = unloadable_file(name); !file.empty()) {
    error_ = file + ": " + util::describe_open_error(util::kNotRegularFile);
    return;
  }
  handle_ = ::dlopen(name.c_str(), (binding == Binding::lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL);
  if (!handle_) {
    const char* e = ::dlerror();
    error_ = e ? e : "dlopen failed";
  }
}

SharedLibrary::~SharedLibrary() {
  if (handle_) ::dlclose(handle_);
}

std::string SharedLibrary::path() const {
  link_map* map = nullptr;
  if (handle_ && ::dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return {};
}

void* SharedLibrary::raw_symbol(const char* name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

}  // namespace provkit::host
