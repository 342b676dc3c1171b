#include "parts.h"
long part1(long), part2(long), part3(long), part4(long), part5(long), part6(long);
long part_sum(int which, long x) {
  static long (*const parts[])(long) = {part1, part2, part3, part4, part5, part6};
  long s = 0;
  for (int i = 0; i < which && i < 6; i++) s += parts[i](x);
  return s;
}
