/* Shaped like Triton's cuda_utils.c launcher stub: includes Python.h, links
 * the driver by its exact file name (-l:libcuda.so.1) and calls into it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef int CUresult;
CUresult cuInit(unsigned int flags);

int stub_init(unsigned int flags) { return cuInit(flags); }

/* Triton 3.6 packs fp16 arguments so: an unsigned char buffer handed to
 * PyFloat_Pack2(double, char *, int). gcc says nothing; clang's default
 * -Wpointer-sign warns on every kernel compile, which the shim must not. */
int stub_pack_half(double x, unsigned char* out) { return PyFloat_Pack2(x, out, 1); }
