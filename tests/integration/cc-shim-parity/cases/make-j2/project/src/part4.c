#include "parts.h"

long part4(long x) { return x * SCALE * 4; }
