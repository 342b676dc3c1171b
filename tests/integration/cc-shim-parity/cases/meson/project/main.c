/* Uses what meson found, so a wrong "yes" fails the build or the run. */
#define _GNU_SOURCE
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#if HAVE_SYS_RANDOM_H
#include <sys/random.h>
#endif

static void *twice(void *arg) {
  *(long *)arg *= 2;
  return NULL;
}

int main(int argc, char **argv) {
  (void)argv;
  unsigned char buf[8];
  (void)buf; /* unused when getrandom is missing */
  long got = -1;
#if HAVE_GETRANDOM
  got = (long)getrandom(buf, sizeof buf, 0);
#endif
  int memfd = -1;
#if HAVE_MEMFD_CREATE
  memfd = memfd_create("parity", 0);
#endif
  long v = 21;
  pthread_t t;
  if (pthread_create(&t, NULL, twice, &v) != 0 || pthread_join(t, NULL) != 0) return 1;
  printf("getrandom=%ld memfd=%s thread=%ld sizeof(long)=%d cos=%.3f\n", got, memfd >= 0 ? "ok" : "none",
         v, SIZEOF_LONG, cos((double)argc - 1.0));
  if (memfd >= 0) close(memfd);
  return 0;
}
