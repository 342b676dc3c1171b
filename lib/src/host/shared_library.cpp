#include "shared_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cerrno>

#include "provkit/util/beneath.hpp"

namespace provkit::host {

SharedLibrary::SharedLibrary(const std::string& name, Binding binding) {
  // A path (not a bare soname for the loader to search) that names a FIFO or a device is refused here: the
  // loader's own open of a FIFO waits for a writer forever. Anything else is the loader's to word.
  if (name.find('/') != std::string::npos) {
    if (util::Fd f = util::open_regular(name); !f && errno == util::kNotRegularFile) {
      error_ = name + ": " + util::describe_open_error(errno);
      return;
    }
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
