/*
 * leaks.c - leak candidates: what is still live at exit (read from the
 * sites after pass 1), and sites whose live bytes keep growing.
 *
 * The growth test (docs/analysis.md): a site grows when its live bytes set
 * a new maximum at least LEAK_K times; the first and the last of those
 * maxima are at least half of the site's window apart (the window: from
 * its first allocation to its process's last record, which must be at
 * least a quarter of the process's run); and at the end it still holds at
 * least 90% of its maximum. The window starts at the site's first
 * allocation so that a slow start-up (CUDA initialization) does not hide a
 * leak. A site that allocates and frees in a loop sets its maximum once;
 * one that only allocates sets it at every allocation.
 */
#include "model/metrics.h"

void leaks_on_grow(struct an_site *s, uint64_t t)
{
	s->max = s->live;
	if (!s->nmax)
		s->first_max_t = t;
	s->last_max_t = t;
	s->nmax++;
}

int leaks_is_growing(const struct analysis *a, const struct an_site *s)
{
	const struct sproc *p = stream_proc(a->s, s->proc);
	uint64_t run = p->last_t > p->first_t ? p->last_t - p->first_t : 0;
	uint64_t window = p->last_t > s->first_max_t ? p->last_t - s->first_max_t : 0;

	return s->nmax >= LEAK_K && window && window * 4 >= run &&
	       (s->last_max_t - s->first_max_t) * 2 >= window && s->live * 10 >= s->max * 9;
}
