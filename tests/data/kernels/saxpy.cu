// A tiny kernel library: the fatbins in this directory's .so files are built
// from it by make_cuda.sh (nvcc 13.0), so the suite reads real NVCC output.
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" int provkit_saxpy(int n, float a, const float* x, float* y) {
  saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y);
  return 0;
}
