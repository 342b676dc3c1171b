#include <stdio.h>
#include "parts.h"

int main(void) {
  printf("%ld %ld built for %s\n", part_sum(6, 1), part_sum(3, 10), TRIPLE);
  return 0;
}
