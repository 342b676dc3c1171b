#include "parts.h"
#include "offset.h"
long part5(long x) { return x * SCALE * 5 + OFFSET; }
