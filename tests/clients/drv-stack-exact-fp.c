/*
 * drv-stack-exact-fp.c - drv-stack-exact.c with frame pointers (t122).
 */
#pragma GCC optimize("no-omit-frame-pointer")
#include "drv-stack-exact.c"
