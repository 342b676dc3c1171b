/* Stand-in libcuda.so.1: cuInit and cuDriverGetVersion, answering from
 * $PROVKIT_FAKE_GPU (libcuda_version, else cuda_version). */
#include "fake_gpu_desc.h"

typedef int CUresult; /* CUDA_SUCCESS 0, CUDA_ERROR_INVALID_VALUE 1, CUDA_ERROR_NO_DEVICE 100 */

CUresult cuInit(unsigned flags) {
  struct fake_desc d;
  if (flags != 0) return 1;
  if (fake_desc_load(&d) != 0 || d.gpu_count == 0) return 100;
  return 0;
}

CUresult cuDriverGetVersion(int* version) {
  struct fake_desc d;
  if (!version) return 1;
  if (fake_desc_load(&d) != 0) return 100;
  *version = d.libcuda_version;
  return 0;
}
