/*
 * drv-stack-exact-o0.c - drv-stack-exact.c compiled at -O0 (every frame
 * rbp-based: t122 checks the walk's rbp rules on every frame).
 */
#pragma GCC optimize("O0")
#include "drv-stack-exact.c"
