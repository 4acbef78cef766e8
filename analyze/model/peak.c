/*
 * peak.c - the peak of reserved memory per device, and what was live then.
 *
 * How it works: pass 1 (account.c) calls peak_check() after every change;
 * a device's peak is the first moment its reserved reaches its maximum, and
 * the event that caused it is kept ("the call that set it"). What was live
 * at that moment is not copied at every new maximum (a run that only grows
 * would copy its live set at each allocation); instead peak_replay() walks
 * the stream a second time, stops at each peak's event number and groups
 * the live allocations by site there. The memory sample of a peak is the
 * first cuMemGetInfo after it if reserved has not changed in between (it
 * then describes the peak exactly), otherwise the latest one before it.
 */
#include <stdlib.h>
#include <string.h>

#include "model/analysis.h"

void peak_check(struct analysis *a, struct an_dev *d, uint64_t t, uint64_t seq, int proc,
		uint16_t api, uint32_t stack, uint64_t bytes)
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
		pk->untraced = (int64_t)(d->sample_used - account_sample_reserved(a, d));
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

struct stop { uint64_t seq; int dev; };

struct replay {
	struct stop *stops;
	size_t n, next;
	uint64_t *bytes, *count;
	struct an_dev *d;
	int di;
	struct analysis *a;
};

static struct replay R;

static int cmp_stop(const void *x, const void *y)
{
	const struct stop *a = x, *b = y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

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
	struct replay *r = ctx;
	int match;

	if (v->dev < 0 || v->site == UINT32_MAX || !counts_at_peak(v->kind))
		return;
	match = r->d->proc >= 0 ? v->dev == r->di : r->a->devs[v->dev].gdev == r->di;
	if (!match)
		return;
	r->bytes[v->site] += v->bytes;
	r->count[v->site]++;
}

static int snapshot(struct analysis *a, int di)
{
	struct an_dev *d = &a->devs[di];
	uint32_t n = 0;

	memset(R.bytes, 0, a->nsites * sizeof(uint64_t));
	memset(R.count, 0, a->nsites * sizeof(uint64_t));
	R.d = d;
	R.di = di;
	account_each_live(a, each, &R);
	for (uint32_t i = 0; i < a->nsites; i++)
		n += R.bytes[i] != 0;
	d->peak_sites = calloc(n ? n : 1, sizeof(*d->peak_sites));
	if (!d->peak_sites)
		return -1;
	for (uint32_t i = 0; i < a->nsites; i++) {
		if (!R.bytes[i])
			continue;
		d->peak_sites[d->npeak_sites].site = i;
		d->peak_sites[d->npeak_sites].bytes = R.bytes[i];
		d->peak_sites[d->npeak_sites].count = R.count[i];
		d->npeak_sites++;
	}
	qsort(d->peak_sites, d->npeak_sites, sizeof(*d->peak_sites), cmp_sb);
	d->snap_done = 1;
	return frag_extents(a, d);
}

static int at(struct analysis *a, uint64_t seq)
{
	while (R.next < R.n && R.stops[R.next].seq == seq) {
		if (snapshot(a, R.stops[R.next].dev))
			return -1;
		R.next++;
	}
	return 0;
}

int peak_replay(struct analysis *a, char *err, size_t errlen)
{
	int rc = -1;

	memset(&R, 0, sizeof(R));
	R.a = a;
	R.stops = calloc((size_t)a->ndevs + 1, sizeof(*R.stops));
	R.bytes = calloc((size_t)a->nsites + 1, sizeof(uint64_t));
	R.count = calloc((size_t)a->nsites + 1, sizeof(uint64_t));
	if (!R.stops || !R.bytes || !R.count)
		goto out;
	for (int i = 0; i < a->ndevs; i++) {
		if (a->devs[i].peak.reserved && a->devs[i].peak.seq) {
			R.stops[R.n].seq = a->devs[i].peak.seq;
			R.stops[R.n].dev = i;
			R.n++;
		}
	}
	qsort(R.stops, R.n, sizeof(*R.stops), cmp_stop);
	rc = 0;
	if (R.n) {
		account_reset(a, 1);
		rc = account_walk(a, NULL, R.stops[R.n - 1].seq, at);
	}
out:
	if (rc)
		snprintf(err, errlen, "out of memory");
	free(R.stops);
	free(R.bytes);
	free(R.count);
	memset(&R, 0, sizeof(R));
	return rc;
}
