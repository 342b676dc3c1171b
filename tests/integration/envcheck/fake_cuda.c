/* Stand-in libcuda.so.1: cuDriverGetVersion, and the driver API calls of
 * envcheck's link test, answering from $PROVKIT_FAKE_GPU. "Device" memory is
 * host memory: every copy is a real memcpy, timed by the caller as on a GPU,
 * and while one runs the stand-in NVML reports gpu.N.pcie_load
 * (provkit_fake_cuda_copying). Copies finish before the call returns, so a
 * stream is only a name. */
#include <stdint.h>

#include "fake_gpu_desc.h"

typedef int CUresult; /* SUCCESS 0, INVALID_VALUE 1, OUT_OF_MEMORY 2, NOT_INITIALIZED 3, NO_DEVICE 100,
                         INVALID_DEVICE 101, INVALID_CONTEXT 201, PEER_ACCESS_UNSUPPORTED 217 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx { int device; } * CUcontext;
typedef void* CUstream;

static struct fake_desc desc;
static int initialised;
static struct fake_ctx contexts[FAKE_MAX_GPUS];
static __thread CUcontext current;
static int copying[FAKE_MAX_GPUS];

/* Which GPU a copy is running on, for the stand-in NVML; 0 when none. */
int provkit_fake_cuda_copying(int device) {
  return device >= 0 && device < FAKE_MAX_GPUS ? __atomic_load_n(&copying[device], __ATOMIC_SEQ_CST) : 0;
}

CUresult cuInit(unsigned flags) {
  if (flags != 0) return 1;
  if (fake_desc_load(&desc) != 0 || desc.gpu_count == 0) return 100;
  initialised = 1;
  return 0;
}

CUresult cuDriverGetVersion(int* version) {
  struct fake_desc d;
  if (!version) return 1;
  if (fake_desc_load(&d) != 0) return 100;
  *version = d.libcuda_version;
  return 0;
}

CUresult cuGetErrorString(CUresult rc, const char** text) {
  static const char* names[] = {[1] = "invalid argument", [2] = "out of memory", [3] = "initialization error"};
  *text = rc > 0 && rc < 4 ? names[rc] : rc == 217 ? "peer access is not supported between these two devices" : "unknown error";
  return 0;
}

#define NEED_INIT if (!initialised) return 3
#define VALID_DEVICE(d) if ((d) < 0 || (d) >= desc.gpu_count) return 101

CUresult cuDeviceGetCount(int* n) { NEED_INIT; *n = desc.gpu_count; return 0; }
CUresult cuDeviceGet(CUdevice* d, int ordinal) { NEED_INIT; VALID_DEVICE(ordinal); *d = ordinal; return 0; }
CUresult cuDeviceGetPCIBusId(char* out, int length, CUdevice d) {
  NEED_INIT;
  VALID_DEVICE(d);
  if (!out || length < 13) return 1;
  snprintf(out, (size_t)length, "%s", desc.gpus[d].pci_bus_id);
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
  NEED_INIT;
  VALID_DEVICE(d);
  contexts[d].device = d;
  *ctx = &contexts[d];
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { NEED_INIT; VALID_DEVICE(d); return 0; }
CUresult cuCtxSetCurrent(CUcontext ctx) { NEED_INIT; current = ctx; return 0; }

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  NEED_INIT;
  if (!current) return 201;
  void* m = malloc(bytes);
  if (!m) return 2;
  memset(m, 0, bytes);
  *p = (CUdeviceptr)(uintptr_t)m;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void*)(uintptr_t)p); return 0; }
CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned flags) {
  (void)flags;
  NEED_INIT;
  *p = malloc(bytes);
  if (!*p) return 2;
  memset(*p, 1, bytes);
  return 0;
}
CUresult cuMemFreeHost(void* p) { free(p); return 0; }
CUresult cuStreamCreate(CUstream* s, unsigned flags) { (void)flags; NEED_INIT; if (!current) return 201; *s = current; return 0; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; NEED_INIT; return 0; }
CUresult cuStreamDestroy_v2(CUstream s) { (void)s; return 0; }

static CUresult copy(int device, void* to, const void* from, size_t bytes) {
  NEED_INIT;
  if (!current) return 201;
  __atomic_add_fetch(&copying[device], 1, __ATOMIC_SEQ_CST);
  memcpy(to, from, bytes);
  __atomic_sub_fetch(&copying[device], 1, __ATOMIC_SEQ_CST);
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream s) {
  (void)s;
  return copy(current ? current->device : 0, (void*)(uintptr_t)dst, src, bytes);
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream s) {
  (void)s;
  return copy(current ? current->device : 0, dst, (const void*)(uintptr_t)src, bytes);
}

CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) {
  NEED_INIT;
  if (!current) return 201;
  unsigned short* p = (unsigned short*)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i) p[i] = value;
  return 0;
}

CUresult cuDeviceCanAccessPeer(int* yes, CUdevice a, CUdevice b) {
  NEED_INIT;
  VALID_DEVICE(a);
  VALID_DEVICE(b);
  *yes = desc.cuda_peer[a][b];
  return 0;
}
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
  NEED_INIT;
  if (!current || !peer || flags) return 1;
  return desc.cuda_peer[current->device][peer->device] ? 0 : 217;
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes, CUstream s) {
  (void)s;
  NEED_INIT;
  if (!dst_ctx || !src_ctx) return 1;
  if (!desc.cuda_peer[src_ctx->device][dst_ctx->device]) return 217;
  return copy(src_ctx->device, (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, bytes);
}
