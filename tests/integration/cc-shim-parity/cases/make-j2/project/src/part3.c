#include "parts.h"
#include "offset.h"
long part3(long x) { return x * SCALE * 3 + OFFSET; }
