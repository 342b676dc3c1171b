#include "cuda_driver.hpp"

#include <map>
#include <vector>

#include "pcie.hpp"

namespace provkit::host {

namespace {

// The driver API's ABI (cuda.h): CUresult 0 = CUDA_SUCCESS; the _v2 names are
// the 64-bit entry points cuda.h maps the plain names to.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUdeviceptr = unsigned long long;
constexpr unsigned kHostAllocPortable = 0x01;  // CU_MEMHOSTALLOC_PORTABLE: pinned for every context
constexpr int kBatch = 4;                      // copies in flight per synchronisation

}  // namespace

struct CudaDriver::Api {
  CUresult (*init)(unsigned);
  CUresult (*device_get_count)(int*);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice);
  CUresult (*primary_ctx_release)(CUdevice);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*mem_alloc)(CUdeviceptr*, std::size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*mem_host_alloc)(void**, std::size_t, unsigned);
  CUresult (*mem_free_host)(void*);
  CUresult (*memcpy_htod_async)(CUdeviceptr, const void*, std::size_t, CUstream);
  CUresult (*memcpy_dtoh_async)(void*, CUdeviceptr, std::size_t, CUstream);
  CUresult (*memset_d16)(CUdeviceptr, unsigned short, std::size_t);
  CUresult (*memcpy_peer_async)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, std::size_t, CUstream);
  CUresult (*stream_create)(CUstream*, unsigned);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*can_access_peer)(int*, CUdevice, CUdevice);
  CUresult (*ctx_enable_peer_access)(CUcontext, unsigned);
  CUresult (*pci_bus_id)(char*, int, CUdevice);
  CUresult (*error_string)(CUresult, const char**);  // optional
  std::map<int, CUcontext> contexts;                 // retained primary contexts by ordinal

  void check(CUresult rc, const char* call) const {
    if (rc == 0) return;
    const char* words = nullptr;
    if (error_string) error_string(rc, &words);
    throw CudaError(call, rc, words ? words : "");
  }
  CUcontext context(int ordinal) {
    if (auto it = contexts.find(ordinal); it != contexts.end()) return it->second;
    CUdevice dev = 0;
    check(device_get(&dev, ordinal), "cuDeviceGet");
    CUcontext ctx = nullptr;
    check(primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    contexts[ordinal] = ctx;
    return ctx;
  }
  void use(int ordinal) { check(ctx_set_current(context(ordinal)), "cuCtxSetCurrent"); }
};

CudaError::CudaError(const std::string& call_, int result_, const std::string& words)
    : Error(ExitCode::check_failed,
            result_ < 0 ? words  // dlopen/dlsym: their own words name the file
                        : call_ + " failed with CUDA error " + std::to_string(result_) +
                              (words.empty() ? "" : " (" + words + ")")),
      call(call_),
      result(result_) {}

namespace {

// Device memory, pinned host memory and a stream of one context, freed in reverse.
struct DeviceBuffer {
  CudaDriver::Api& api;
  CUdeviceptr ptr = 0;
  DeviceBuffer(CudaDriver::Api& a, std::size_t bytes) : api(a) {
    api.check(api.mem_alloc(&ptr, bytes), "cuMemAlloc_v2");
  }
  ~DeviceBuffer() { api.mem_free(ptr); }
};
struct HostBuffer {
  CudaDriver::Api& api;
  void* ptr = nullptr;
  HostBuffer(CudaDriver::Api& a, std::size_t bytes) : api(a) {
    api.check(api.mem_host_alloc(&ptr, bytes, kHostAllocPortable), "cuMemHostAlloc");
  }
  ~HostBuffer() { api.mem_free_host(ptr); }
};
struct Stream {
  CudaDriver::Api& api;
  CUstream stream = nullptr;
  explicit Stream(CudaDriver::Api& a) : api(a) { api.check(api.stream_create(&stream, 0), "cuStreamCreate"); }
  ~Stream() { api.stream_destroy(stream); }
};

// Runs batches of `copy` (which enqueues one) until the budget has passed.
template <class Copy>
CopyTiming timed(CudaDriver::Api& api, CUstream stream, std::size_t chunk, std::chrono::duration<double> budget,
                 Copy copy) {
  copy();  // one untimed copy: the first pays for lazy set-up
  api.check(api.stream_synchronize(stream), "cuStreamSynchronize");
  CopyTiming t;
  const auto start = std::chrono::steady_clock::now();
  do {
    for (int i = 0; i < kBatch; ++i) copy();
    api.check(api.stream_synchronize(stream), "cuStreamSynchronize");
    t.bytes += static_cast<std::uint64_t>(chunk) * kBatch;
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (t.seconds < budget.count());
  return t;
}

}  // namespace

CudaDriver::CudaDriver(const std::string& library) : library_(library), api_(std::make_unique<Api>()) {
  if (!library_.loaded()) throw CudaError("dlopen", -1, library_.error());
  auto& a = *api_;
  auto need = [&](auto& fn, const char* name) {
    fn = library_.symbol<std::remove_reference_t<decltype(fn)>>(name);
    if (!fn) throw CudaError("dlsym", -1, library + " has no " + name);
  };
  need(a.init, "cuInit");
  need(a.device_get_count, "cuDeviceGetCount");
  need(a.device_get, "cuDeviceGet");
  need(a.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  need(a.primary_ctx_release, "cuDevicePrimaryCtxRelease_v2");
  need(a.ctx_set_current, "cuCtxSetCurrent");
  need(a.mem_alloc, "cuMemAlloc_v2");
  need(a.mem_free, "cuMemFree_v2");
  need(a.mem_host_alloc, "cuMemHostAlloc");
  need(a.mem_free_host, "cuMemFreeHost");
  need(a.memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
  need(a.memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
  need(a.memcpy_peer_async, "cuMemcpyPeerAsync");
  need(a.memset_d16, "cuMemsetD16_v2");
  need(a.stream_create, "cuStreamCreate");
  need(a.stream_synchronize, "cuStreamSynchronize");
  need(a.stream_destroy, "cuStreamDestroy_v2");
  need(a.can_access_peer, "cuDeviceCanAccessPeer");
  need(a.ctx_enable_peer_access, "cuCtxEnablePeerAccess");
  need(a.pci_bus_id, "cuDeviceGetPCIBusId");
  a.error_string = library_.symbol<decltype(a.error_string)>("cuGetErrorString");
  a.check(a.init(0), "cuInit");
}

CudaDriver::~CudaDriver() {
  for (const auto& [ordinal, ctx] : api_->contexts) {
    CUdevice dev = 0;
    if (api_->device_get(&dev, ordinal) == 0) api_->primary_ctx_release(dev);
  }
}

int CudaDriver::device_count() {
  int n = 0;
  api_->check(api_->device_get_count(&n), "cuDeviceGetCount");
  return n;
}

std::string CudaDriver::pci_bus_id(int ordinal) {
  CUdevice dev = 0;
  api_->check(api_->device_get(&dev, ordinal), "cuDeviceGet");
  char text[64] = {};
  api_->check(api_->pci_bus_id(text, sizeof text - 1, dev), "cuDeviceGetPCIBusId");
  return canonical_bus_id(text);
}

bool CudaDriver::can_access_peer(int ordinal, int peer) {
  CUdevice a = 0, b = 0;
  api_->check(api_->device_get(&a, ordinal), "cuDeviceGet");
  api_->check(api_->device_get(&b, peer), "cuDeviceGet");
  int yes = 0;
  api_->check(api_->can_access_peer(&yes, a, b), "cuDeviceCanAccessPeer");
  return yes != 0;
}

CopyTiming CudaDriver::time_host_copies(int ordinal, CopyDirection direction, std::size_t chunk,
                                        std::chrono::duration<double> budget) {
  auto& a = *api_;
  a.use(ordinal);
  DeviceBuffer dev(a, chunk);
  HostBuffer host(a, chunk);
  Stream s(a);
  return timed(a, s.stream, chunk, budget, [&] {
    if (direction == CopyDirection::host_to_device)
      a.check(a.memcpy_htod_async(dev.ptr, host.ptr, chunk, s.stream), "cuMemcpyHtoDAsync_v2");
    else a.check(a.memcpy_dtoh_async(host.ptr, dev.ptr, chunk, s.stream), "cuMemcpyDtoHAsync_v2");
  });
}

CopyTiming CudaDriver::time_peer_copies(int src, int dst, bool direct, std::size_t chunk,
                                        std::chrono::duration<double> budget) {
  auto& a = *api_;
  a.use(dst);
  DeviceBuffer to(a, chunk);
  a.use(src);
  DeviceBuffer from(a, chunk);
  HostBuffer staging(a, chunk);
  Stream s(a);
  if (direct) {
    // From src's context, map dst's memory; "already enabled" (704) is fine.
    if (CUresult rc = a.ctx_enable_peer_access(a.context(dst), 0); rc != 0 && rc != 704)
      a.check(rc, "cuCtxEnablePeerAccess");
    return timed(a, s.stream, chunk, budget, [&] {
      a.check(a.memcpy_peer_async(to.ptr, a.context(dst), from.ptr, a.context(src), chunk, s.stream),
              "cuMemcpyPeerAsync");
    });
  }
  // Host-staged: both halves on one stream (a copy of dst's memory from src's
  // context goes through unified addressing, as the runtime's staged path does).
  return timed(a, s.stream, chunk, budget, [&] {
    a.check(a.memcpy_dtoh_async(staging.ptr, from.ptr, chunk, s.stream), "cuMemcpyDtoHAsync_v2");
    a.check(a.memcpy_htod_async(to.ptr, staging.ptr, chunk, s.stream), "cuMemcpyHtoDAsync_v2");
  });
}

std::uint64_t CudaDriver::allocate(int ordinal, std::size_t bytes) {
  api_->use(ordinal);
  CUdeviceptr ptr = 0;
  api_->check(api_->mem_alloc(&ptr, bytes), "cuMemAlloc_v2");
  return ptr;
}

void CudaDriver::free(std::uint64_t device_pointer) { api_->mem_free(device_pointer); }

void* CudaDriver::create_stream(int ordinal) {
  api_->use(ordinal);
  CUstream stream = nullptr;
  api_->check(api_->stream_create(&stream, 0), "cuStreamCreate");
  return stream;
}

void CudaDriver::synchronize(void* stream) {
  api_->check(api_->stream_synchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
}

void CudaDriver::fill16(int ordinal, std::uint64_t device_pointer, std::uint16_t value, std::size_t count) {
  api_->use(ordinal);
  api_->check(api_->memset_d16(device_pointer, value, count), "cuMemsetD16_v2");
}

void CudaDriver::copy_to_host(int ordinal, void* host, std::uint64_t device_pointer, std::size_t bytes, void* stream) {
  api_->use(ordinal);
  api_->check(api_->memcpy_dtoh_async(host, device_pointer, bytes, static_cast<CUstream>(stream)),
              "cuMemcpyDtoHAsync_v2");
  synchronize(stream);
}

void CudaDriver::destroy_stream(void* stream) { api_->stream_destroy(static_cast<CUstream>(stream)); }

}  // namespace provkit::host
