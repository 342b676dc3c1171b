#ifndef PARTS_H
#define PARTS_H
#include "scale.h"
long part_sum(int which, long x);
#endif
