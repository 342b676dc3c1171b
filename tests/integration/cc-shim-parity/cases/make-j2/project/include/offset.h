#ifndef OFFSET_H
#define OFFSET_H
#define OFFSET 1000
#endif
