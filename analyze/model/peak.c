/*
 * peak.c - the peak of reserved memory per device, and what was live then.
 *
 * How it works: pass 1 (account.c) calls peak_check() after every change;
 * a device's peak is the first moment its reserved reaches its maximum, and
 * the event that caused it is kept ("the call that set it"). What was live
 * at that moment is not copied at every new maximum (a run that only grows
 * would copy its live set at each allocation); instead the pass walks the
 * stream a second time (account.c, replay) and calls peak_snapshot() at
 * each peak's record, which groups the live allocations by site there. The memory sample of a peak is the
 * first cuMemGetInfo after it if reserved has not changed in between (it
 * then describes the peak exactly), otherwise the latest one before it.
 */
#include <stdlib.h>
#include <string.h>

#include "model/live.h"
#include "model/metrics.h"

void peak_check(struct analysis *a, struct an_dev *d, uint64_t t, uint64_t seq, int proc,
		uint16_t api, uint32_t stack, uint64_t bytes, uint64_t sample_reserved)
{
	struct an_peak *pk = &d->peak;

	if (d->reserved <= pk->reserved) {
		if (d->reserved != pk->reserved)
			pk->pending = 0;
		return;
	}
	pk->reserved = d->reserved;
	pk->allocated = d->allocated;
	pk->time = t;
	pk->seq = seq;
	pk->proc = proc;
	pk->api = api;
	pk->stack = stack;
	pk->bytes = bytes;
	pk->pending = 1;
	pk->has_sample = d->has_sample;
	if (d->has_sample) {
		pk->used = d->sample_used;
		pk->sample_time = d->sample_time;
		pk->untraced = (int64_t)(d->sample_used - sample_reserved);
	}
}

void peak_sample(struct an_dev *d, uint64_t t)
{
	struct an_peak *pk = &d->peak;

	if (!pk->reserved)
		return;
	if ((pk->pending && d->reserved == pk->reserved) || !pk->has_sample) {
		pk->used = d->sample_used;
		pk->sample_time = t;
		pk->untraced = (int64_t)(d->sample_used - d->reserved);
		pk->has_sample = 1;
		pk->pending = 0;
	}
}

struct snap {
	uint64_t *bytes, *count;    /* per an_site */
	const struct analysis *a;
	const struct an_dev *d;
	int di;
};

static int cmp_sb(const void *x, const void *y)
{
	const struct an_sitebytes *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

static int counts_at_peak(uint8_t kind)
{
	return kind == MT_KIND_DEVICE || kind == MT_KIND_MANAGED || kind == MT_KIND_ARRAY ||
	       kind == MT_KIND_ASYNC || kind == MT_KIND_VMM_PHYS;
}

static void each(void *ctx, const struct an_live_view *v)
{
	struct snap *r = ctx;
	int match;

	if (v->dev < 0 || v->site == UINT32_MAX || !counts_at_peak(v->kind))
		return;
	match = r->d->proc >= 0 ? v->dev == r->di : r->a->devs[v->dev].gdev == r->di;
	if (!match)
		return;
	r->bytes[v->site] += v->bytes;
	r->count[v->site]++;
}

int peak_group(const struct analysis *a, int di, struct an_sitebytes **out, uint32_t *nout)
{
	const struct an_dev *d = &a->devs[di];
	struct snap R = { calloc((size_t)a->nsites + 1, sizeof(uint64_t)),
			  calloc((size_t)a->nsites + 1, sizeof(uint64_t)), a, d, di };
	struct an_sitebytes *v = NULL;
	uint32_t n = 0;
	int rc = -1;

	*out = NULL;
	*nout = 0;
	if (!R.bytes || !R.count)
		goto out;
	live_each(a->live, each, &R);
	for (uint32_t i = 0; i < a->nsites; i++)
		n += R.bytes[i] != 0;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		goto out;
	n = 0;
	for (uint32_t i = 0; i < a->nsites; i++) {
		if (!R.bytes[i])
			continue;
		v[n].site = i;
		v[n].bytes = R.bytes[i];
		v[n].count = R.count[i];
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_sb);
	*out = v;
	*nout = n;
	rc = 0;
out:
	free(R.bytes);
	free(R.count);
	return rc;
}

int peak_snapshot(struct analysis *a, int di)
{
	struct an_dev *d = &a->devs[di];

	if (peak_group(a, di, &d->peak_sites, &d->npeak_sites))
		return -1;
	d->snap_done = 1;
	return frag_extents(a, d);
}
