/* pixman-combine-float.c's INV_DA_OVER_SA factor over a row of pixels, with
 * divide-by-zero exceptions unmasked as pixman's tests unmask them: the
 * division is guarded, so the source never divides by zero. */
#define _GNU_SOURCE
#include <fenv.h>
#include <stdio.h>
#define CLAMP(f) ((f) < 0.0f ? 0.0f : (f) > 1.0f ? 1.0f : (f))
__attribute__((noinline)) void saturate(float *d, const float *s, int n) {
  for (int i = 0; i < n; i++) {
    float sa = s[i], da = d[i], f;
    if (sa == 0.0f)
      f = 1.0f;
    else
      f = CLAMP((1.0f - da) / sa);
    d[i] = f * da + sa;
  }
}
int main(void) {
  float s[512], d[512];
  for (int i = 0; i < 512; i++) {
    s[i] = (i % 4) ? 0.5f : 0.0f;
    d[i] = 0.25f;
  }
  feenableexcept(FE_DIVBYZERO);
  saturate(d, s, 512);
  printf("%.3f %.3f\n", d[0], d[1]);
  return 0;
}
