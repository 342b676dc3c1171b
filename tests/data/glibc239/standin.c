/* A stand-in libc.so.6 of a host newer than zig knows (Ubuntu 24.04's glibc
   2.39): only its version definitions matter (standin.map). */
int standin_2_2_5(void) { return 225; }
int standin_2_34(void) { return 234; }
int standin_2_39(void) { return 239; }
