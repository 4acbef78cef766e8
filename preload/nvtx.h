/*
 * nvtx.h - what nvtx.c (NVTX's core modules: ranges, marks, domains) shares
 * with nvtx-mem.c (NVTX's memory extension): the handles memtrace hands
 * out for domains and registered strings, and the user's own injection
 * library that both chain to (MEMTRACE_NVTX_CHAIN).
 */
#ifndef MEMTRACE_NVTX_H
#define MEMTRACE_NVTX_H

#include <wchar.h>

/* The chained tool's handle inside one of memtrace's domain or string
   handles (the pointer itself when it is not memtrace's). */
void *mt_nvtx_chained(const void *handle);
/* The text of one of memtrace's handles (a domain's name, a registered
   string), NULL when it is not memtrace's (the default domain: NULL). */
const char *mt_nvtx_text(const void *handle);
/* A wide string in UTF-8, malloc'd; NULL when out of memory. */
char *mt_nvtx_wide_utf8(const wchar_t *w);
/* The chained injection library's dlopen handle, loaded at most once, or
   NULL: none asked for, it failed to load, or its core init failed. */
void *mt_nvtx_chain_lib(void);

#endif
