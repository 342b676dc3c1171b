#pragma once
// Private to host (lib/src/host/). A library opened with dlopen at run time (the NVIDIA driver's NVML and
// libcuda), closed when it goes out of scope. Nothing of the driver is needed
// to build, and a host without one gets an error text instead of a crash.
#include <string>

namespace provkit::host {

class SharedLibrary {
 public:
  // now: RTLD_NOW, every function the library calls bound at load (a broken
  // library fails here, not mid-call); lazy: RTLD_LAZY, each bound on its
  // first call, for a probe that calls two or three entry points of a 30+ MB
  // library (libcuda's cuDriverGetVersion). RTLD_LOCAL either way.
  enum class Binding { now, lazy };
  explicit SharedLibrary(const std::string& name, Binding binding = Binding::now);  // error() says why it failed
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  std::string path() const;  // the file the loader picked; "" when not loaded
  void* raw_symbol(const char* name) const;
  template <class F>
  F symbol(const char* name) const {
    return reinterpret_cast<F>(raw_symbol(name));
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace provkit::host
