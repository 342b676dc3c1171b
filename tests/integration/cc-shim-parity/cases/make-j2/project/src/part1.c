#include "parts.h"
#include "offset.h"
long part1(long x) { return x * SCALE * 1 + OFFSET; }
