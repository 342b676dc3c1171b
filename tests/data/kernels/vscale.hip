// A tiny HIP kernel library: make_hip.sh builds libh_*.so from it with Debian's hipcc 5.2,
// so the suite reads real clang offload bundles.
#include <hip/hip_runtime.h>
extern "C" __global__ void vscale(int n, const float* a, float* b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] *= a[i];
}
extern "C" int provkit_vscale(int n, const float* a, float* b) {
  hipLaunchKernelGGL(vscale, dim3((n + 255) / 256), dim3(256), 0, 0, n, a, b);
  return 0;
}
