#ifndef SCALE_H
#define SCALE_H
#define SCALE 7
#endif
