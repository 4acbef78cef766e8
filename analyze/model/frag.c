/*
 * frag.c - fragmentation: how much of what a device holds is not in use,
 * and whether what is free can serve a large request.
 *
 *  - cached share: (reserved - allocated) / reserved, at the peak and as a
 *    byte-time average over the run (the integral of cached over the
 *    integral of reserved);
 *  - free extents at the peak: inside each VMM reservation, the unmapped
 *    holes (exact); inside each pool, approximated from what the trace
 *    shows: the free total is reserved - used of its latest POOL record,
 *    the holes are the gaps between its live allocations sorted by address,
 *    and what the gaps do not explain is taken as one more extent (the tail
 *    of the last chunk); the largest of these, capped at the free total, is
 *    "the largest request that fits without asking the driver";
 *  - a power-of-two histogram of the sizes of device allocations;
 *  - the caching-allocator out-of-memory signature: a failed allocation,
 *    then frees on the same thread, then a retry of at least the failed
 *    size on that thread.
 */
#include <stdlib.h>
#include <string.h>

#include "model/live.h"
#include "model/metrics.h"

void frag_advance(struct an_dev *d, uint64_t t)
{
	if (t > d->last_t) {
		double dt = (double)(t - d->last_t);

		d->int_reserved += dt * (double)d->reserved;
		d->int_cached += dt * (double)(d->reserved - d->allocated);
		d->last_t = t;
	}
}

int frag_bucket(uint64_t bytes)
{
	int b = bytes ? 63 - __builtin_clzll(bytes) : 0;    /* floor(log2) */

	return b < AN_HIST - 1 ? b : AN_HIST - 1;
}

void frag_hist_add(struct an_dev *d, uint64_t bytes)
{
	int b = frag_bucket(bytes);

	d->hist_count[b]++;
	d->hist_bytes[b] += bytes;
}

/* --- the out-of-memory retry signature, per thread --------------------- */

#define MAX_PENDING 64

struct pending {
	int proc;
	uint32_t tid;
	int dev;
	uint64_t time, requested, freed;
	uint32_t nfrees;
	int used;
};

static struct pending pend[MAX_PENDING];
static int npend;           /* used entries: none (the usual case) spares
                               every event the walk of the table */

void frag_reset(void)
{
	memset(pend, 0, sizeof(pend));
	npend = 0;
}

static struct pending *find(int proc, uint32_t tid)
{
	if (!npend)
		return NULL;
	for (int i = 0; i < MAX_PENDING; i++)
		if (pend[i].used && pend[i].proc == proc && pend[i].tid == tid)
			return &pend[i];
	return NULL;
}

static int add_sig(struct analysis *a, struct pending *p, uint64_t bytes, uint16_t result,
		   uint64_t t)
{
	struct an_oomsig *s;
	void *n = realloc(a->oomsigs, (a->noomsigs + 1) * sizeof(*a->oomsigs));

	if (!n)
		return -1;
	a->oomsigs = n;
	s = &a->oomsigs[a->noomsigs++];
	s->time = p->time;
	s->proc = p->proc;
	s->tid = p->tid;
	s->dev = p->dev;
	s->requested = p->requested;
	s->freed = p->freed;
	s->nfrees = p->nfrees;
	s->retry_bytes = bytes;
	s->retry_result = result;
	s->retry_time = t;
	return 0;
}

/* An allocation (result 0) on a thread: a retry when it follows a failure
   and frees. A failed allocation goes through frag_oom_failed. */
void frag_oom_alloc(struct analysis *a, int proc, uint32_t tid, uint64_t bytes, uint16_t result,
		    uint64_t t)
{
	struct pending *p = find(proc, tid);

	if (!p || bytes < p->requested)
		return;
	if (p->nfrees && a->noomsigs < 1000)
		add_sig(a, p, bytes, result, t);
	p->used = 0;
	npend--;
}

void frag_oom_failed(struct analysis *a, int proc, uint32_t tid, int dev, uint64_t bytes,
		     uint16_t result, uint64_t t)
{
	struct pending *p = find(proc, tid);

	if (p)
		frag_oom_alloc(a, proc, tid, bytes, result, t);   /* a failed retry */
	if (!(p = find(proc, tid))) {
		for (int i = 0; i < MAX_PENDING; i++)
			if (!pend[i].used) {
				p = &pend[i];
				npend++;
				break;
			}
		if (!p)
			p = &pend[tid % MAX_PENDING];
	}
	memset(p, 0, sizeof(*p));
	p->used = 1;
	p->proc = proc;
	p->tid = tid;
	p->dev = dev;
	p->time = t;
	p->requested = bytes;
}

void frag_oom_free(struct analysis *a, int proc, uint32_t tid, uint64_t bytes)
{
	struct pending *p = find(proc, tid);

	(void)a;
	if (p) {
		p->freed += bytes;
		p->nfrees++;
	}
}

/* --- free extents at the peak ------------------------------------------- */

struct span { uint64_t lo, hi, key; };

struct collect {
	struct analysis *a;
	struct an_dev *d;
	int di;
	struct span *maps, *reserves, *blocks;
	size_t nmaps, nreserves, nblocks, cmaps, creserves, cblocks;
	int oom;
};

static void push(struct collect *c, struct span **v, size_t *n, size_t *cap, uint64_t lo,
		 uint64_t hi, uint64_t key)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		void *p = realloc(*v, nc * sizeof(**v));

		if (!p) {
			c->oom = 1;
			return;
		}
		*v = p;
		*cap = nc;
	}
	(*v)[*n].lo = lo;
	(*v)[*n].hi = hi;
	(*v)[*n].key = key;
	(*n)++;
}

static int on_dev(struct collect *c, int pdev, int proc)
{
	if (c->d->proc >= 0)
		return pdev == c->di || (pdev < 0 && proc == c->d->proc);
	return pdev >= 0 && c->a->devs[pdev].gdev == c->di;
}

static void each_live(void *ctx, const struct an_live_view *v)
{
	struct collect *c = ctx;

	if (v->kind == MT_KIND_VMM_MAP && on_dev(c, v->dev, v->proc))
		push(c, &c->maps, &c->nmaps, &c->cmaps, v->addr, v->addr + v->bytes,
		     (uint64_t)v->proc);
	else if (v->kind == MT_KIND_VMM_RESERVE && (c->d->proc < 0 || v->proc == c->d->proc))
		push(c, &c->reserves, &c->nreserves, &c->creserves, v->addr, v->addr + v->bytes,
		     (uint64_t)v->proc);
	else if (v->kind == MT_KIND_ASYNC && on_dev(c, v->dev, v->proc))
		push(c, &c->blocks, &c->nblocks, &c->cblocks, v->addr, v->addr + v->bytes,
		     v->x1 ^ ((uint64_t)v->proc << 56));
}

static int cmp_span(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int add_extent(struct an_dev *d, const struct an_extent *e)
{
	void *n = realloc(d->extents, (d->nextents + 1) * sizeof(*d->extents));

	if (!n)
		return -1;
	d->extents = n;
	d->extents[d->nextents++] = *e;
	return 0;
}

struct pools { struct collect *c; int fail; };

static void each_pool(void *ctx, const struct an_pool_view *v)
{
	struct pools *ps = ctx;
	struct collect *c = ps->c;
	uint64_t key = v->pool ^ ((uint64_t)v->proc << 56), gaps = 0, biggest = 0, last = 0;
	struct an_extent e = { 1, v->pool, 0, 0, 0 };
	int first = 1;

	if (!v->has_record || !on_dev(c, v->dev, v->proc))
		return;
	e.size = v->reserved;
	e.free_total = v->reserved > v->used ? v->reserved - v->used : 0;
	for (size_t i = 0; i < c->nblocks; i++) {
		const struct span *s = &c->blocks[i];

		if (s->key != key)
			continue;
		if (!first && s->lo > last) {
			uint64_t g = s->lo - last;

			gaps += g;
			if (g > biggest)
				biggest = g;
		}
		first = 0;
		if (s->hi > last)
			last = s->hi;
	}
	if (gaps < e.free_total && e.free_total - gaps > biggest)
		biggest = e.free_total - gaps;
	e.free_largest = biggest < e.free_total ? biggest : e.free_total;
	if (add_extent(c->d, &e))
		ps->fail = 1;
}

int frag_extents(struct analysis *a, struct an_dev *d)
{
	struct collect c;
	struct pools ps = { &c, 0 };
	int rc = 0;

	memset(&c, 0, sizeof(c));
	c.a = a;
	c.d = d;
	c.di = (int)(d - a->devs);
	live_each(a->live, each_live, &c);
	if (c.oom)
		rc = -1;
	if (c.nmaps)
		qsort(c.maps, c.nmaps, sizeof(*c.maps), cmp_span);
	if (c.nblocks)
		qsort(c.blocks, c.nblocks, sizeof(*c.blocks), cmp_span);
	/* reservations: the holes between the mappings inside each */
	for (size_t i = 0; !rc && i < c.nreserves; i++) {
		const struct span *r = &c.reserves[i];
		struct an_extent e = { 0, r->lo, r->hi - r->lo, 0, 0 };
		uint64_t at = r->lo;
		int any = 0;

		for (size_t k = 0; k < c.nmaps; k++) {
			const struct span *m = &c.maps[k];

			if (m->key != r->key || m->hi <= r->lo || m->lo >= r->hi)
				continue;
			any = 1;
			if (m->lo > at) {
				e.free_total += m->lo - at;
				if (m->lo - at > e.free_largest)
					e.free_largest = m->lo - at;
			}
			if (m->hi > at)
				at = m->hi;
		}
		if (!any)
			continue;   /* nothing of this device is mapped in it */
		if (r->hi > at) {
			e.free_total += r->hi - at;
			if (r->hi - at > e.free_largest)
				e.free_largest = r->hi - at;
		}
		if (add_extent(d, &e))
			rc = -1;
	}
	if (!rc) {
		live_each_pool(a->live, each_pool, &ps);
		rc = ps.fail ? -1 : 0;
	}
	free(c.maps);
	free(c.reserves);
	free(c.blocks);
	return rc;
}
