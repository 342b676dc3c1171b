/* The instruction set extensions the compiler builds for (make-j2/run.sh). */
#include <stdio.h>

static const char *const isa[] = {
#ifdef __SSE4_2__
    "sse4.2",
#endif
#ifdef __AVX__
    "avx",
#endif
#ifdef __AVX2__
    "avx2",
#endif
#ifdef __FMA__
    "fma",
#endif
#ifdef __BMI2__
    "bmi2",
#endif
#ifdef __AVX512F__
    "avx512f",
#endif
    "base"};

int main(void) {
  for (size_t i = 0; i < sizeof isa / sizeof isa[0]; i++) printf("%s%s", i ? " " : "isa: ", isa[i]);
  printf("\n");
  return 0;
}
