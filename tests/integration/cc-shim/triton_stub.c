/* Shaped like Triton's cuda_utils.c launcher stub: includes Python.h, links
 * the driver by its exact file name (-l:libcuda.so.1) and calls into it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef int CUresult;
CUresult cuInit(unsigned int flags);

int stub_init(unsigned int flags) { return cuInit(flags); }
