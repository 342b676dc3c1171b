#pragma once
// Private to host (lib/src/host/). The handful of CUDA driver API calls envcheck's link test makes, through
// libcuda.so.1 opened with dlopen (no CUDA runtime or toolkit needed). The
// types are declared from the driver API's documented ABI; each call that
// fails throws CudaError naming the call and its CUresult.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "provkit/error.hpp"
#include "shared_library.hpp"

namespace provkit::host {

class CudaError : public Error {
 public:
  CudaError(const std::string& call, int result, const std::string& words);
  std::string call;  // "cuMemAlloc_v2"; "dlopen" or "dlsym" when the library is not usable
  int result = 0;    // its CUresult; -1 for dlopen/dlsym
};

// What one timed run of copies moved: bytes over seconds of wall time.
struct CopyTiming {
  std::uint64_t bytes = 0;
  double seconds = 0;
  double gb_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0; }
};

enum class CopyDirection { host_to_device, device_to_host };

class CudaDriver {
 public:
  // Opens the library and calls cuInit(0). Throws CudaError (call "dlopen"
  // when the library itself cannot be opened or lacks an entry point).
  explicit CudaDriver(const std::string& library);
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  int device_count();
  std::string pci_bus_id(int ordinal);  // sysfs's spelling, "0000:01:00.0"
  bool can_access_peer(int ordinal, int peer);

  // Copies `chunk` bytes between pinned host memory (cuMemHostAlloc) and the
  // device, on one stream, in batches, until `budget` has passed; the clock
  // runs from the first copy issued to the last one synchronised.
  CopyTiming time_host_copies(int ordinal, CopyDirection direction, std::size_t chunk,
                              std::chrono::duration<double> budget);
  // Copies from `src` to `dst` the same way: with cuMemcpyPeerAsync after
  // cuCtxEnablePeerAccess when `direct`, else staged through pinned host
  // memory (device to host, host to device), as a runtime without P2P does.
  CopyTiming time_peer_copies(int src, int dst, bool direct, std::size_t chunk, std::chrono::duration<double> budget);

  // For a collective another library runs (NCCL): device memory and a stream on `ordinal`'s primary
  // context, each freed by its own call (nccl.cpp holds them in owners).
  std::uint64_t allocate(int ordinal, std::size_t bytes);
  void free(std::uint64_t device_pointer);
  void* create_stream(int ordinal);
  void synchronize(void* stream);
  void destroy_stream(void* stream);
  void fill16(int ordinal, std::uint64_t device_pointer, std::uint16_t value, std::size_t count);  // cuMemsetD16
  // Copies `bytes` back on `stream` and waits for them.
  void copy_to_host(int ordinal, void* host, std::uint64_t device_pointer, std::size_t bytes, void* stream);

  struct Api;  // the entry points, resolved once

 private:
  SharedLibrary library_;
  std::unique_ptr<Api> api_;
};

}  // namespace provkit::host
