/*
 * failures.c - every failed allocation, with the state of its device at
 * that moment: the process's reserved bytes, the sites holding the most,
 * and the free bytes of the next memory sample of that device (the
 * recorder samples cuMemGetInfo right after a failed allocation).
 * The first AN_MAX_FAILURES are kept in detail; the rest are counted.
 */
#include <stdlib.h>
#include <string.h>

#include "model/metrics.h"

int failures_add(struct analysis *a, uint64_t t, int proc, uint32_t tid, const struct mt_event *e,
		 int dev, const struct an_dev *pd)
{
	struct an_failure *f;

	a->failures_total++;
	if (a->nfailures >= AN_MAX_FAILURES)
		return 0;
	if (!a->failures) {
		a->failures = calloc(AN_MAX_FAILURES, sizeof(*a->failures));
		if (!a->failures)
			return -1;
	}
	f = &a->failures[a->nfailures++];
	memset(f, 0, sizeof(*f));
	f->time = t;
	f->proc = proc;
	f->tid = tid;
	f->api = e->api;
	f->dev = dev;
	f->requested = e->bytes;
	f->error = e->result;
	f->runtime = !!(e->h.a & MT_KIND_RUNTIME);
	f->stack = e->stack_id;
	f->reserved = pd ? pd->reserved : 0;
	/* the top holders: the sites of this process on this device */
	for (uint32_t i = 0; i < a->nsites; i++) {
		const struct an_site *s = &a->sites[i];
		int k;

		if (s->proc != proc || s->dev != dev || s->host || !s->live)
			continue;
		for (k = f->ntop; k > 0 && a->sites[f->top[k - 1].site].live < s->live; k--)
			if (k < AN_TOP)
				f->top[k] = f->top[k - 1];
		if (k < AN_TOP) {
			f->top[k].site = i;
			f->top[k].bytes = s->live;
			f->top[k].count = s->count;
			if (f->ntop < AN_TOP)
				f->ntop++;
		}
	}
	return 0;
}

void failures_sample(struct analysis *a, int proc, int dev, uint64_t free_bytes)
{
	for (uint32_t i = a->nfailures; i-- > 0;) {
		struct an_failure *f = &a->failures[i];

		if (!f->has_free_after && f->proc == proc && f->dev == dev) {
			f->free_after = free_bytes;
			f->has_free_after = 1;
		}
	}
}
