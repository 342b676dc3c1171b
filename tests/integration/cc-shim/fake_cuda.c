/* Stand-in for the driver library libcuda.so.1 (built by gcc with soname
 * libcuda.so.1, and as a 32-bit decoy of the same name by clang). */
typedef int CUresult;
CUresult cuInit(unsigned int flags) { return 42 + (int)flags; }
