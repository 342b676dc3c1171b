/* Uses what the probes found, so a wrong "found" fails the build or the run. */
#define _GNU_SOURCE
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef HAVE_SYS_RANDOM_H
#include <sys/random.h>
#endif

int main(int argc, char **argv) {
  (void)argv;
  unsigned char buf[8];
  (void)buf; /* unused when getrandom is missing */
  long got = -1;
#ifdef HAVE_GETRANDOM
  got = (long)getrandom(buf, sizeof buf, 0);
#endif
  int memfd = -1;
#ifdef HAVE_MEMFD_CREATE
  memfd = memfd_create("parity", 0);
#endif
  printf("getrandom=%ld memfd=%s sizeof(long)=%d cos=%.3f\n", got, memfd >= 0 ? "ok" : "none",
         SIZEOF_LONG, cos((double)argc - 1.0));
  /* Macros a build without -O gets from the compiler alone (gcc: none of these). */
#ifdef _DEBUG
  puts("_DEBUG defined");
#endif
#ifdef __OPTIMIZE__
  puts("__OPTIMIZE__ defined");
#endif
  if (memfd >= 0) close(memfd);
  return 0;
}
