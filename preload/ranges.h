/*
 * ranges.h - the recorder's range records (format 2.1): the program's own
 * units of time, from NVTX (nvtx.c), the marker API (markers.h) and the
 * Python API. ranges.c writes MT_REC_RANGE and interns MT_REC_STRING.
 */
#ifndef MEMTRACE_RANGES_H
#define MEMTRACE_RANGES_H

#include <stddef.h>
#include <stdint.h>
#include "mt.h"

/* The id of a string (len bytes, cut at MT_STRING_MAX), writing its
   MT_REC_STRING first when this file has none yet; 0 when s is NULL or
   nothing can be written. Lock-free for a string seen before; now is
   the time of the call it is for. */
uint32_t mt_string_id(struct mt_thread *t, uint64_t now, const char *s, size_t len);
/* The same of a NUL-terminated wide string, converted to UTF-8. */
uint32_t mt_string_id_w(struct mt_thread *t, uint64_t now, const wchar_t *s);
/* One range record at time now (mt_now(), read once per call: the clock
   is most of a record's cost); has_id: the 24-byte form. */
void mt_range_write(struct mt_thread *t, uint64_t now, int op, int origin, uint32_t domain,
		    uint32_t message, uint64_t id, int has_id);
/* A new range id for a start: unique in the process, never 0. */
uint64_t mt_range_new_id(void);
/* The calling thread's open push count (all domains), after a change of
   delta; never below 0: a pop with none open returns -1 and leaves 0. */
int mt_range_depth(int delta);
void mt_ranges_fork_child(void);

#endif
