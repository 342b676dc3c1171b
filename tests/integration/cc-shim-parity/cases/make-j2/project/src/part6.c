#include "parts.h"

long part6(long x) { return x * SCALE * 6; }
