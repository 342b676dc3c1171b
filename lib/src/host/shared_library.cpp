#include "shared_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace provkit::host {

SharedLibrary::SharedLibrary(const std::string& name) {
  handle_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
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
